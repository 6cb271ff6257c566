// Generic: the parent of a foreign host gains and loses 8 px of padding every 250 ms (a carousel, a
// ticker or a late ad shifting the layout), so the pattern never stands still, though it moves less
// than any of its options is tall.
quirk.eachHost((host) => {
  const parent = host.parentElement;
  if (!parent || parent.dataset.jitter) return;
  parent.dataset.jitter = "1";
  let on = false;
  setInterval(() => {
    on = !on;
    parent.style.paddingTop = on ? "8px" : "";
  }, 250);
});
