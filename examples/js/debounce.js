// Delay calls to fn until wait milliseconds have passed without a new call.
export function debounce(fn, wait, options = {}) {
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

  debounced.pending = () => timer !== null;
  return debounced;
}
