// Hostile: every foreign node is removed as soon as it appears (what a React or Vue re-render does to
// nodes it did not create, here done on purpose).
quirk.eachHost((host) => host.remove());
