window.innerLoaded = true;
