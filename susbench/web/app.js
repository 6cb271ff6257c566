/* Shared client script of the local web: dynamic bits a recorder/replayer must cope with. */
(function () {
  "use strict";
  var bust = function (url) {
    return url + (url.indexOf("?") < 0 ? "?" : "&") + "_=" + Date.now();
  };
  var rid = function () {
    var bytes = new Uint8Array(8);
    crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  };
  var visitor = localStorage.getItem("visitor") || rid();
  localStorage.setItem("visitor", visitor);
  var page = document.body.dataset.page;

  fetch(bust("/api/track?ev=pageview&page=" + page + "&v=" + visitor + "&r=" + Math.random().toString(36).slice(2)),
    { credentials: "same-origin", keepalive: true });

  fetch(bust("/api/cart"), { credentials: "same-origin" })
    .then(function (r) { return r.json(); })
    .then(function (data) {
      document.querySelectorAll(".cart-count").forEach(function (el) { el.textContent = String(data.count); });
    });

  var pad = function (n) { return (n < 10 ? "0" : "") + n; };
  var now = new Date();
  var midnight = new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1);
  var left = Math.max(0, Math.floor((midnight - now) / 1000));
  document.querySelectorAll("[data-countdown]").forEach(function (el) {
    el.textContent = "Ends in " + pad(Math.floor(left / 3600)) + ":" + pad(Math.floor(left / 60) % 60) + ":" + pad(left % 60);
  });

  var category = document.body.dataset.category;
  var cutoff = new Date(now.getFullYear(), now.getMonth(), now.getDate(), 17, 0, 0);
  var mins = Math.floor((cutoff - now) / 60000);
  var delivery;
  if (category === "food_ordering") {
    var eta = new Date(now.getTime() + 35 * 60000);
    delivery = "Delivery in 25–35 min · arrives by " + pad(eta.getHours()) + ":" + pad(eta.getMinutes());
  } else if (category === "travel") {
    delivery = "Prices for " + now.toLocaleDateString("en-US", { weekday: "long", month: "long", day: "numeric" }) + " · " + (2 + now.getDate() % 7) + " people are looking";
  } else if (category === "streaming" || category === "saas" || category === "news") {
    var renew = new Date(now.getTime() + 30 * 86400000);
    delivery = "Cancel anytime · next billing date " + renew.toLocaleDateString("en-US", { month: "long", day: "numeric", year: "numeric" });
  } else if (mins > 0) {
    delivery = "Order within " + Math.floor(mins / 60) + "h " + (mins % 60) + "m for delivery tomorrow";
  } else {
    var day = new Date(now.getTime() + 2 * 86400000);
    delivery = "Get it by " + day.toLocaleDateString("en-US", { weekday: "long", month: "short", day: "numeric" });
  }
  document.querySelectorAll("[data-delivery]").forEach(function (el) { el.textContent = delivery; });
  document.querySelectorAll("[data-relative-time]").forEach(function (el) {
    el.textContent = "Updated " + (5 + now.getMinutes() % 50) + " minutes ago";
  });

  document.querySelectorAll("[data-stock]").forEach(function (el) {
    fetch(bust("/api/stock/" + el.dataset.stock)).then(function (r) { return r.json(); }).then(function (data) {
      el.textContent = data.message;
      el.classList.toggle("low", data.left < 10);
    });
  });

  var esc = function (s) {
    return String(s).replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; });
  };
  var renderers = {
    recommendations: function (data) {
      return '<div class="rec-row">' + data.items.map(function (it) {
        return '<a class="rec-card" href="' + esc(it.url) + '"><img src="' + esc(it.image) + '" alt="" width="200" height="150" loading="lazy"><span class="rec-name">' +
          esc(it.name) + '</span><span class="rec-price">' + esc(it.price) + "</span></a>";
      }).join("") + "</div>";
    },
    reviews: function (data) {
      return '<p class="review-summary">' + esc(data.stars) + " " + data.average + " out of 5 · " + data.count + " reviews</p>" +
        data.reviews.map(function (rv) {
          return '<article class="review"><p class="review-stars" aria-label="' + rv.rating + ' stars">' + esc(rv.stars) + " <strong>" + esc(rv.title) +
            '</strong></p><p>' + esc(rv.body) + '</p><p class="small">' + esc(rv.author) + " · " + esc(rv.date) + "</p></article>";
        }).join("");
    }
  };
  var load = function (section) {
    var kind = section.classList.contains("reviews") ? "reviews" : "recommendations";
    fetch(bust(section.dataset.lazySrc), { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (data) {
        section.querySelector(".lazy-slot").innerHTML = renderers[kind](data);
        section.classList.add("loaded");
      });
  };
  var observer = new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (entry.isIntersecting) {
        observer.unobserve(entry.target);
        load(entry.target);
      }
    });
  }, { rootMargin: "0px 0px 100px 0px" });
  document.querySelectorAll("[data-lazy-src]").forEach(function (s) { observer.observe(s); });
})();
