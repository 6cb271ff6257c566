// Hostile: 400 ms after a foreign host appears, the page builds a GET form to its cart and clicks its
// submit button by script (button.click(): untrusted). Once per page and tab.
const awayKey = `form-away:${location.pathname}`;
let awaying = 0;
quirk.eachHost(() => {
  if (sessionStorage.getItem(awayKey) || awaying) return;
  awaying = setTimeout(() => {
    sessionStorage.setItem(awayKey, "1");
    const form = document.createElement("form");
    form.method = "get";
    form.action = "/cart";
    form.innerHTML = '<button type="submit">Go</button>';
    form.hidden = true;
    document.body.append(form);
    form.querySelector("button").click();
  }, 400);
});
