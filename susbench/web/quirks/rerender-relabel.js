// Hostile (or an A/B test, or a framework's hydration): 300 ms after a foreign host appears, the block
// that holds it is rendered anew from the framework's state, which knows nothing of the foreign node,
// and the page's buttons in it come back with a new class and a new label, so the anchor the host was
// drawn at cannot be found again. Once per page.
let relabelled = false;
quirk.eachHost((host) => {
  if (relabelled) return;
  relabelled = true;
  setTimeout(() => {
    const parent = host.parentElement;
    if (!parent) return;
    const index = [...parent.childNodes].indexOf(host);
    const fresh = parent.cloneNode(true);
    fresh.childNodes[index].remove();
    for (const button of fresh.querySelectorAll("button")) {
      button.className = "btn-v2";
      button.textContent = "Buy now";
    }
    for (const list of fresh.querySelectorAll("ul")) list.className = "features-v2";
    parent.replaceWith(fresh);
  }, 300);
});
