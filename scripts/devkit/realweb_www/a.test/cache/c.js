window.cacheScript = true;
