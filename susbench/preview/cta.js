// Evaluated after extension/semantic.js into an isolated world of the page `injections realism`
// measures: marks the page's primary call to action, found by meaning as the extension finds it (its
// buy button, else its main form's submit), so realism.js holds a pattern's drawn call to action
// against that element and not against whichever button of the page happens to look closest.

/* exported markCallToAction */
function markCallToAction(vocabulary, mark) {
  "use strict";
  const hit = semanticAnchors(document, vocabulary, {}).callToAction();
  if (hit) hit.element.setAttribute(mark, hit.by);
  return hit ? hit.by : null;
}
