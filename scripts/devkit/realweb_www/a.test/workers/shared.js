onconnect = (e) => {
  const port = e.ports[0];
  fetch('w2.json').then((r) => r.json()).then((j) => port.postMessage(j));
};
