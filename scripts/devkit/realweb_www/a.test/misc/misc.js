// a CORS request with a non-safelisted header: Chromium sends an OPTIONS preflight first
// (Fetch Standard, "CORS-preflight fetch"); and an image from a blob: URL
fetch('https://b.test:{PORT}/api/cors.json', { headers: { 'X-Proto': 'lens' } })
  .then((r) => r.json()).then((j) => { window.cors = j; });
const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>';
const url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
addEventListener('DOMContentLoaded', () => {
  const img = document.createElement('img');
  img.src = url;
  img.alt = 'blob';
  document.body.append(img);
});
