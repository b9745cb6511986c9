// registers the worker on the first load; from the second load on, it answers this page's requests
window.swControlled = navigator.serviceWorker.controller !== null;
navigator.serviceWorker.register('sw.js').then(() => { window.swRegistered = true; })
  .catch((e) => { window.swError = String(e); });
