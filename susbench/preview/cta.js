// Evaluated after extension/semantic.js into an isolated world of the page `injections realism`
// measures: marks the page's primary call to action, found by meaning as the extension finds it (its
// buy button, else its main form's submit), so realism.js holds a pattern's drawn call to action
// against that element and not against whichever button of the page happens to look closest.

/* exported markCallToAction */
function markCallToAction(vocabulary, mark) {
  "use strict";
  const hit = semanticAnchors(document, vocabulary, {}).callToAction();
  // A disabled one (a saved page's buy button before a size is chosen) is no look to copy, for the
  // extension either: the drawn button is then held against the nearest of the page's.
  if (!hit || hit.element.matches(":disabled, [aria-disabled=true]")) return null;
  hit.element.setAttribute(mark, hit.by);
  return hit.by;
}
