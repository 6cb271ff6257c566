// Hostile: the parent of a foreign host gains and loses 160 px of padding every 250 ms, so the pattern
// jumps by more than any option's height and nobody can aim at it.
quirk.eachHost((host) => {
  const parent = host.parentElement;
  if (!parent || parent.dataset.shake) return;
  parent.dataset.shake = "1";
  let on = false;
  setInterval(() => {
    on = !on;
    parent.style.paddingTop = on ? "160px" : "";
  }, 250);
});
