// Benign: a variant picker that restores the visitor's last variant after loading: it rewrites the URL
// with history.replaceState and updates the price shown.
quirk.afterLoad(150, () => {
  history.replaceState(history.state, "", `${location.pathname}?variant=2`);
  const price = document.querySelector("h1 ~ .price, .buy-box .price, .price");
  if (price) price.append(" (variant 2)");
});
