/* Legacy copy kept for the old bundle. Do not edit; see ../debounce.js */
function debounce(fn, wait, options = {}) {
  let timer = null;
  let lastArgs = null;
  let lastThis = null;
  const leading = Boolean(options.leading);

  function invoke() {
    const args = lastArgs;
    const self = lastThis;
    lastArgs = null;
    lastThis = null;
    return fn.apply(self, args);
  }

  function debounced(...args) {
    lastArgs = args;
    lastThis = this;
    const callNow = leading && timer === null;
    if (timer !== null) {
      clearTimeout(timer);
    }
    timer = setTimeout(() => {
      timer = null;
      if (!leading && lastArgs !== null) {
        invoke();
      }
    }, wait);
    if (callNow) {
      return invoke();
    }
    return undefined;
  }

  debounced.cancel = function cancel() {
    if (timer !== null) {
      clearTimeout(timer);
    }
    timer = null;
    lastArgs = null;
    lastThis = null;
  };

  debounced.flush = function flush() {
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
      return invoke();
    }
    return undefined;
  };

  debounced.pending = () => timer !== null;
  return debounced;
}

module.exports = { debounce };
