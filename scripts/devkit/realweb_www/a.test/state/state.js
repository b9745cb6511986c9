// What many real pages do after load without changing route: a framework's router writes its own
// state into the current entry once the page is hydrated (Next.js's app router:
// replaceState({...history.state, __NA: true, ...}, '', url)), and scroll restoration keeps the
// scroll position there (replaceState with location.href). The URL stays: no navigation. Then the
// page keeps loading (a lazy image), inside the record's quiet after load.
window.addEventListener('load', () => {
  setTimeout(() => {
    history.replaceState({ ...history.state, __NA: true }, '');
    history.replaceState({ ...history.state, scroll: window.scrollY }, '', location.href);
    setTimeout(() => {
      const img = document.createElement('img');
      img.src = 'later.png';
      img.alt = 'later';
      img.onload = () => { window.stateDone = true; };
      document.body.append(img);
    }, 100);
  }, 100);
});
