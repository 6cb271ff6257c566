// Hostile: 400 ms after a foreign host appears, the page builds a GET form to its own address and clicks
// its submit button by script (button.click(): untrusted), so the page is loaded again as if the visitor
// had submitted a search. Once per page and tab.
const formKey = `form-got:${location.pathname}`;
let forming = 0;
quirk.eachHost(() => {
  if (sessionStorage.getItem(formKey) || forming) return;
  forming = setTimeout(() => {
    sessionStorage.setItem(formKey, "1");
    const form = document.createElement("form");
    form.method = "get";
    form.action = location.pathname;
    form.innerHTML = '<input type="hidden" name="ref" value="promo"><button type="submit">Go</button>';
    form.hidden = true;
    document.body.append(form);
    form.querySelector("button").click();
  }, 400);
});
