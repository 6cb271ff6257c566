// Hostile: 100 ms after a foreign host appears, the page re-writes itself with its own markup
// (document.open() and document.write(), as old ad and A/B-testing scripts do). document.open() erases
// every event listener of the document and the window, an extension's as well, and the scripts written
// into the new document listen on the window again, possibly before anyone else.
if (!window.quirkRewritten) {
  let pending = 0;
  quirk.eachHost(() => {
    pending ||= setTimeout(() => {
      window.quirkRewritten = true;
      const markup = document.documentElement.outerHTML;
      document.open();
      document.write(`<!doctype html>${markup}`);
      document.close();
      window.addEventListener("pointerdown", (event) => quirk.isHost(event.target) && (window.quirkGotPress = true), true);
    }, 100);
  });
}
