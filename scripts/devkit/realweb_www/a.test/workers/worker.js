fetch('w1.json').then((r) => r.json()).then((j) => postMessage(j));
