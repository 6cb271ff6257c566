// Benign: a React-style re-render of a foreign host's parent, twice after loading: the parent is
// replaced by a fresh copy of itself rendered from the framework's state, which knows nothing of the
// foreign node.
function rerender() {
  for (const host of quirk.hosts()) {
    const parent = host.parentElement;
    const index = [...parent.childNodes].indexOf(host);
    const fresh = parent.cloneNode(true);
    fresh.childNodes[index].remove();
    parent.replaceWith(fresh);
  }
}
quirk.afterLoad(100, rerender);
quirk.afterLoad(1200, rerender);
