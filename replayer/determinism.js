/*
 * SusBench Replay determinism shim: inserted by the replayer as the first script of every HTML
 * document it serves, so every browser behind the proxy sees the same frozen world.
 *
 * Clock: `Date`, `Date.now()`, `new Date()` and `performance.now()` read a virtual clock that
 * starts at the snapshot's `clock_seed_ms` and advances only deterministically:
 *   - when a callback of the page's own `setTimeout`/`setInterval` runs, the clock jumps to the
 *     virtual time the timer was due (scheduling time + delay), never backwards;
 *   - a script that reads the clock more than 10 000 times without a timer firing in between sees
 *     1 ms pass per further read, so busy-wait loops still end.
 * Randomness: `Math.random`, `crypto.getRandomValues` and `crypto.randomUUID` draw from sfc32
 * seeded with the snapshot's `random_seed` and the recorded document URL.
 * Time zone and locale: `Intl.DateTimeFormat`/`NumberFormat` defaults, `Date#getTimezoneOffset`,
 * `Date#toLocale*String` and `navigator.language(s)` follow the snapshot's manifest.
 * Service workers: `navigator.serviceWorker.register` always rejects.
 * The script removes its own element, so the page's DOM carries no trace of it.
 */
(function (cfg) {
  "use strict";
  var self = document.currentScript;
  if (self && self.parentNode) {
    self.parentNode.removeChild(self);
  }
  if (window.__susbenchDeterministic) {
    return;
  }
  Object.defineProperty(window, "__susbenchDeterministic", { value: true });

  var NativeDate = Date;
  var now = cfg.clock;
  var reads = 0;
  function tick() {
    reads += 1;
    if (reads > 10000) {
      now += 1;
    }
    return now;
  }
  function advanceTo(due) {
    reads = 0;
    if (due > now) {
      now = due;
    }
  }

  var FakeDate = new Proxy(NativeDate, {
    construct: function (target, args, newTarget) {
      return Reflect.construct(target, args.length === 0 ? [tick()] : args, newTarget);
    },
    apply: function () {
      return new NativeDate(tick()).toString();
    },
  });
  NativeDate.now = function now() {
    return tick();
  };
  window.Date = FakeDate;

  var nativeSetTimeout = window.setTimeout;
  var nativeSetInterval = window.setInterval;
  window.setTimeout = function setTimeout(handler, delay) {
    if (typeof handler !== "function") {
      return nativeSetTimeout.apply(window, arguments);
    }
    var wait = Math.max(0, Number(delay) || 0);
    var due = now + wait;
    var rest = Array.prototype.slice.call(arguments, 2);
    return nativeSetTimeout.call(window, function () {
      advanceTo(due);
      return handler.apply(this, rest);
    }, wait);
  };
  window.setInterval = function setInterval(handler, delay) {
    if (typeof handler !== "function") {
      return nativeSetInterval.apply(window, arguments);
    }
    var wait = Math.max(0, Number(delay) || 0);
    var due = now;
    var rest = Array.prototype.slice.call(arguments, 2);
    return nativeSetInterval.call(window, function () {
      due += wait;
      advanceTo(due);
      return handler.apply(this, rest);
    }, wait);
  };

  if (window.performance) {
    var perf = Object.getPrototypeOf(window.performance);
    perf.now = function now() {
      return tick() - cfg.clock;
    };
    Object.defineProperty(perf, "timeOrigin", {
      configurable: true,
      get: function () {
        return cfg.clock;
      },
    });
  }
  var nativeRaf = window.requestAnimationFrame;
  if (nativeRaf) {
    window.requestAnimationFrame = function requestAnimationFrame(callback) {
      return nativeRaf.call(window, function () {
        callback(now - cfg.clock);
      });
    };
  }

  var a = cfg.seed[0] | 0;
  var b = cfg.seed[1] | 0;
  var c = cfg.seed[2] | 0;
  var d = cfg.seed[3] | 0;
  function nextUint32() {
    var t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  }
  for (var warm = 0; warm < 12; warm += 1) {
    nextUint32();
  }
  Math.random = function random() {
    return nextUint32() / 4294967296;
  };
  if (window.crypto && window.Crypto) {
    var cryptoProto = window.Crypto.prototype;
    var nativeGetRandomValues = cryptoProto.getRandomValues;
    cryptoProto.getRandomValues = function getRandomValues(array) {
      if (!ArrayBuffer.isView(array) || array instanceof Float32Array || array instanceof Float64Array) {
        return nativeGetRandomValues.call(this, array);
      }
      var bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
      for (var i = 0; i < bytes.length; i += 1) {
        bytes[i] = nextUint32() & 255;
      }
      return array;
    };
    cryptoProto.randomUUID = function randomUUID() {
      var hex = [];
      for (var i = 0; i < 16; i += 1) {
        var value = nextUint32() & 255;
        if (i === 6) value = (value & 0x0f) | 0x40;
        if (i === 8) value = (value & 0x3f) | 0x80;
        hex.push((value + 256).toString(16).slice(1));
      }
      var s = hex.join("");
      return s.slice(0, 8) + "-" + s.slice(8, 12) + "-" + s.slice(12, 16) + "-" + s.slice(16, 20) + "-" + s.slice(20);
    };
  }

  var NativeDTF = Intl.DateTimeFormat;
  function withZone(options) {
    var merged = Object.assign({}, options);
    if (!merged.timeZone) {
      merged.timeZone = cfg.timezone;
    }
    return merged;
  }
  function DateTimeFormat(locales, options) {
    return new NativeDTF(locales === undefined ? cfg.locale : locales, withZone(options));
  }
  DateTimeFormat.prototype = NativeDTF.prototype;
  DateTimeFormat.supportedLocalesOf = NativeDTF.supportedLocalesOf;
  Intl.DateTimeFormat = DateTimeFormat;
  var NativeNF = Intl.NumberFormat;
  function NumberFormat(locales, options) {
    return new NativeNF(locales === undefined ? cfg.locale : locales, options);
  }
  NumberFormat.prototype = NativeNF.prototype;
  NumberFormat.supportedLocalesOf = NativeNF.supportedLocalesOf;
  Intl.NumberFormat = NumberFormat;

  // Made on first use: building an ICU formatter for the zone held up every document's parser.
  var zoneParts = null;
  function zoneFormatter() {
    if (zoneParts === null) {
      zoneParts = new NativeDTF("en-US", {
        timeZone: cfg.timezone,
        hourCycle: "h23",
        year: "numeric",
        month: "numeric",
        day: "numeric",
        hour: "numeric",
        minute: "numeric",
        second: "numeric",
      });
    }
    return zoneParts;
  }
  var dateProto = NativeDate.prototype;
  var nativeGetTime = dateProto.getTime;
  dateProto.getTimezoneOffset = function getTimezoneOffset() {
    var time = nativeGetTime.call(this);
    if (time !== time) {
      return NaN;
    }
    var whole = Math.floor(time / 1000) * 1000;
    var parts = {};
    zoneFormatter().formatToParts(new NativeDate(whole)).forEach(function (part) {
      parts[part.type] = part.value;
    });
    var wall = NativeDate.UTC(+parts.year, +parts.month - 1, +parts.day, +parts.hour % 24, +parts.minute, +parts.second);
    return Math.round((whole - wall) / 60000);
  };
  ["toLocaleString", "toLocaleDateString", "toLocaleTimeString"].forEach(function (name) {
    var native = dateProto[name];
    dateProto[name] = function (locales, options) {
      return native.call(this, locales === undefined ? cfg.locale : locales, withZone(options));
    };
  });
  var nativeNumberLocale = Number.prototype.toLocaleString;
  Number.prototype.toLocaleString = function toLocaleString(locales, options) {
    return nativeNumberLocale.call(this, locales === undefined ? cfg.locale : locales, options);
  };

  var navProto = Object.getPrototypeOf(navigator);
  var languages = Object.freeze([cfg.locale, cfg.locale.split("-")[0]].filter(function (v, i, all) {
    return all.indexOf(v) === i;
  }));
  Object.defineProperty(navProto, "language", { configurable: true, get: function () { return cfg.locale; } });
  Object.defineProperty(navProto, "languages", { configurable: true, get: function () { return languages; } });

  if (window.ServiceWorkerContainer) {
    window.ServiceWorkerContainer.prototype.register = function register() {
      return Promise.reject(new DOMException("service workers are disabled during replay", "SecurityError"));
    };
  }
})(__SUSBENCH_CONFIG__);
