// Hostile: once a foreign host is in the viewport, the page scrolls the window 160 px down and back up
// every 250 ms, so the pattern never holds still on the screen though nothing on the page moves it.
let jittering = false;
quirk.eachHost((host) => {
  if (jittering) return;
  jittering = true;
  let down = false;
  setInterval(() => {
    const box = host.getBoundingClientRect();
    if (box.bottom < 0 || box.top > innerHeight) return;
    down = !down;
    scrollBy({ top: down ? 160 : -160, behavior: "instant" });
  }, 250);
});
