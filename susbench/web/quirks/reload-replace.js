// Hostile: 700 ms after a foreign host appears, the page reloads itself and at once rewrites its URL
// with history.replaceState, so the document's latest navigation is a same-document one of its own,
// masking the cross-document reload it started. Once per page and tab.
const reloadKey = `reloaded:${location.pathname}`;
let reloading = 0;
quirk.eachHost(() => {
  if (sessionStorage.getItem(reloadKey) || reloading) return;
  reloading = setTimeout(() => {
    sessionStorage.setItem(reloadKey, "1");
    location.reload();
    history.replaceState(history.state, "", location.href);
  }, 700);
});
