// The message channel to the service worker: observations go out with this document's id and the
// episode's token; the controller's requests come in relayed by the worker (pages cannot reach either
// side).
"use strict";
(() => {
  const helper = globalThis.pageHelper;
  const { state } = helper;

  function send(message) {
    try {
      return chrome.runtime.sendMessage({ ...message, doc: state.doc }).catch(() => null);
    } catch {
      return Promise.resolve(null); // the extension was reloaded under this page
    }
  }

  function report(type, detail = {}) {
    if (state.current) send({ kind: "event", token: state.current.token, type, detail: { ...detail, url: location.href } });
  }

  // Answers the worker's requests of one kind with `reply(message)`; messages from anyone else are ignored.
  function answer(kind, reply) {
    chrome.runtime.onMessage.addListener((message, sender, respond) => {
      if (sender.id !== chrome.runtime.id || !message || message.kind !== kind) return false;
      respond(reply(message));
      return false;
    });
  }

  helper.channel = { send, report, answer };
})();
