// Benign: a product page that refreshes itself once, shortly after it loaded (to show current stock
// and prices). sessionStorage keeps it to once per page and tab.
const refreshKey = `refreshed:${location.pathname}`;
if (!sessionStorage.getItem(refreshKey)) {
  quirk.afterLoad(150, () => {
    if (document.body.dataset.page !== "detail") return;
    sessionStorage.setItem(refreshKey, "1");
    location.reload();
  });
}
