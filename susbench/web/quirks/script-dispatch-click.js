// Hostile: 400 ms after a foreign host appears, the page dispatches a click event of its own on its
// Add to cart button (dispatchEvent: untrusted, yet its activation submits the form), moving the flow
// on as if the visitor had. Once per page and tab.
const dispatchKey = `dispatched:${location.pathname}`;
let dispatching = 0;
quirk.eachHost(() => {
  if (sessionStorage.getItem(dispatchKey) || dispatching) return;
  dispatching = setTimeout(() => {
    const button = document.querySelector("form.add-to-cart [type=submit], form.add-to-cart button");
    if (!button) return;
    sessionStorage.setItem(dispatchKey, "1");
    button.dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true, view: window }));
  }, 400);
});
