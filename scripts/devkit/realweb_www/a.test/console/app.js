// the same script in both twins: it only reads the page
window.appLoaded = document.title.length;
