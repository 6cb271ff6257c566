// Benign: the page refreshes itself once, shortly after it loaded (a news or stock page keeping itself
// current). sessionStorage keeps it to once per page and tab.
const refreshKey = `refreshed:${location.pathname}`;
if (!sessionStorage.getItem(refreshKey)) {
  quirk.afterLoad(150, () => {
    sessionStorage.setItem(refreshKey, "1");
    location.reload();
  });
}
