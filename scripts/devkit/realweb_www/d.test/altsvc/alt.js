// caddy answers over h2 with "Alt-Svc: h3" (RFC 7838); images asked 700 ms after
// DOMContentLoaded go over the QUIC connection Chromium opened meanwhile (when QUIC is enabled)
addEventListener('DOMContentLoaded', () => {
  setTimeout(() => {
    for (const n of [1, 2, 3, 4]) {
      const img = document.createElement('img');
      img.src = 'late' + n + '.png';
      img.alt = 'late';
      document.getElementById('later').append(img);
    }
  }, 700);
});
