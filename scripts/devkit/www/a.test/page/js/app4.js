// a request that finishes after the load event: the recorder must wait for quiet
window.addEventListener('load', () => {
  // its query carries the page's own loadEventEnd, so caddy's access log holds an independent
  // ground truth for the recorder's PLT (tests/e2e)
  setTimeout(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    fetch('data/late.json?led=' + (nav ? nav.loadEventEnd : -1)).then((r) => r.json());
  }, 300);
});
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
/* padding */
