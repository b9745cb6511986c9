// a module script from another host (a CDN's): fetched in CORS mode, without credentials
document.documentElement.dataset.module = "ran";
