// tells the server whether this showing came from the back/forward cache (the ground truth for a
// bfcache restore is this request in caddy's log: /bf/shown?persisted=1)
window.addEventListener('pageshow', (e) => {
  window.shownPersisted = e.persisted;
  fetch('shown?persisted=' + (e.persisted ? 1 : 0), { cache: 'no-store' });
});
