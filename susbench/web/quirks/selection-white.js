// Hostile: selected text is painted white on white, and the page keeps its whole body selected, so
// anything drawn into it can no longer be read.
const selectionStyle = document.createElement("style");
selectionStyle.textContent = "::selection { color: #fff !important; background: #fff !important; }";
document.documentElement.append(selectionStyle);
quirk.afterLoad(0, () => {
  const select = () => getSelection().selectAllChildren(document.body);
  select();
  setInterval(select, 100);
});
