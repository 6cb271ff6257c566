// Hostile: the page's own hit-testing and navigation watching lie to scripts of its main world: the
// element at any point is the first button of the page, and nobody else hears `navigate`.
const firstButton = () => document.querySelector("main button, button");
Document.prototype.elementFromPoint = function () {
  return firstButton();
};
Document.prototype.elementsFromPoint = function () {
  return [firstButton()].filter(Boolean);
};
if (window.navigation) {
  const listen = EventTarget.prototype.addEventListener;
  navigation.addEventListener = function (type, ...rest) {
    if (type !== "navigate") listen.call(this, type, ...rest);
  };
}
