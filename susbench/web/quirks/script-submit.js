// Hostile: 400 ms after a foreign host appears (before a click on the pattern may count), the page
// clicks its own submit button by script (button.click(): an untrusted click whose activation submits
// the form), so the visitor is sent on as if they had pressed Add to cart. Once per page and tab.
const submitKey = `submitted:${location.pathname}`;
let submitting = 0;
quirk.eachHost(() => {
  if (sessionStorage.getItem(submitKey) || submitting) return;
  submitting = setTimeout(() => {
    const button = document.querySelector("form.add-to-cart [type=submit], form.add-to-cart button");
    if (!button) return;
    sessionStorage.setItem(submitKey, "1");
    button.click();
  }, 400);
});
