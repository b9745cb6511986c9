document.body.dataset.frame = 'ran';
