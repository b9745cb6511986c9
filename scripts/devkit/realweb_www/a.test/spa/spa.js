// a soft navigation as single-page apps make them: 600 ms after load, history.pushState to a
// new URL, then its content fetched and shown
window.addEventListener('load', () => {
  setTimeout(async () => {
    history.pushState({ view: 2 }, '', 'view2');
    const data = await (await fetch('view2.json')).json();
    document.getElementById('title').textContent = data.title;
    const img = document.createElement('img');
    img.src = 'v2.png';
    img.alt = 'v2';
    img.onload = () => { window.softDone = true; };
    document.getElementById('view').append(img);
  }, 600);
});
