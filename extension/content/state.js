// What this page holds for the running episode, shared by the content parts. All content scripts of
// the extension share one isolated world, and its globals (this namespace) are invisible to the page.
"use strict";
(() => {
  const helper = (globalThis.pageHelper ||= {});
  helper.state = {
    current: null, // {injection, template, token} while this page is the injection's page
    mounted: null, // {host, root, frame, exposed} once the pattern is drawn

    // The drawn pattern is never an anchor, a button whose look is copied, or a site control.
    ours(el) {
      return Boolean(this.mounted) && (el === this.mounted.host || this.mounted.host.contains(el));
    },
  };
})();
