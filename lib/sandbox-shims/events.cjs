"use strict";
/**
 * A minimal EventEmitter for packages that extend one (xmlbuilder2's callback builder): the sandbox offers no
 * `events` module, and Node's would be an object of the host realm shared by every run.
 */
class EventEmitter {
  _listenersOf(name) {
    if (this._events === undefined) this._events = new Map();
    let list = this._events.get(name);
    if (list === undefined) {
      list = [];
      this._events.set(name, list);
    }
    return list;
  }

  on(name, listener) {
    this._listenersOf(name).push(listener);
    return this;
  }

  addListener(name, listener) {
    return this.on(name, listener);
  }

  once(name, listener) {
    const wrapper = (...args) => {
      this.off(name, wrapper);
      listener.apply(this, args);
    };
    wrapper.listener = listener;
    return this.on(name, wrapper);
  }

  off(name, listener) {
    const list = this._listenersOf(name);
    const index = list.findIndex((l) => l === listener || l.listener === listener);
    if (index >= 0) list.splice(index, 1);
    return this;
  }

  removeListener(name, listener) {
    return this.off(name, listener);
  }

  removeAllListeners(name) {
    if (name === undefined) this._events = new Map();
    else this._listenersOf(name).length = 0;
    return this;
  }

  listeners(name) {
    return this._listenersOf(name).map((l) => l.listener ?? l);
  }

  listenerCount(name) {
    return this._listenersOf(name).length;
  }

  emit(name, ...args) {
    const list = [...this._listenersOf(name)];
    if (name === "error" && list.length === 0)
      throw args[0] instanceof Error ? args[0] : new Error(String(args[0]));
    for (const listener of list) listener.apply(this, args);
    return list.length > 0;
  }
}

module.exports = EventEmitter;
module.exports.EventEmitter = EventEmitter;
