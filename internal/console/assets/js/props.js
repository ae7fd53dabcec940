// A key/value editor for namespace and table properties. It computes the
// change as updates and removals, the shape both APIs take, so nothing
// the person did not touch is sent.
import {h, replace, errorBox, table, empty} from './dom.js';

// propsEditor renders props; when editable, onSave(updates, removals) is
// called with the difference and may throw an ApiError, which is shown.
export function propsEditor(props, {editable, onSave, label}) {
  const box = h('div', {class: 'props', 'data-props': label});
  const keys = Object.keys(props || {}).sort();
  if (!editable) {
    if (!keys.length) return replace(box, empty('No properties.'));
    return replace(box, table(['Key', 'Value'], keys.map((k) => h('tr', {}, h('td', {class: 'mono'}, k), h('td', {class: 'mono'}, props[k])))));
  }
  const removed = new Set();
  const inputs = new Map();
  const status = h('div', {class: 'status', role: 'status'});
  const rows = keys.map((k) => {
    const input = h('input', {type: 'text', value: props[k], 'aria-label': `Value of ${k}`, class: 'mono'});
    inputs.set(k, input);
    const tr = h('tr', {}, h('td', {class: 'mono'}, k), h('td', {}, input));
    const btn = h('button', {type: 'button', class: 'small', onclick: () => {
      if (removed.has(k)) { removed.delete(k); tr.classList.remove('removed'); btn.textContent = 'Remove'; input.disabled = false; }
      else { removed.add(k); tr.classList.add('removed'); btn.textContent = 'Undo'; input.disabled = true; }
    }}, 'Remove');
    tr.append(h('td', {}, btn));
    return tr;
  });
  const newKey = h('input', {type: 'text', placeholder: 'new key', 'aria-label': 'New property key', class: 'mono'});
  const newVal = h('input', {type: 'text', placeholder: 'value', 'aria-label': 'New property value', class: 'mono'});
  const save = h('button', {type: 'submit'}, 'Save properties');
  const form = h('form', {onsubmit: async (ev) => {
    ev.preventDefault();
    const updates = {};
    for (const [k, input] of inputs) if (!removed.has(k) && input.value !== props[k]) updates[k] = input.value;
    if (newKey.value.trim()) updates[newKey.value.trim()] = newVal.value;
    const removals = [...removed];
    if (!Object.keys(updates).length && !removals.length) { replace(status, 'Nothing changed.'); return; }
    save.disabled = true;
    replace(status, 'Saving…');
    try {
      await onSave(updates, removals);
      replace(status, 'Saved.');
    } catch (e) {
      replace(status, errorBox(e, 'Saving properties'));
    } finally {
      save.disabled = false;
    }
  }},
  table(['Key', 'Value', ''], [...rows, h('tr', {}, h('td', {}, newKey), h('td', {}, newVal), h('td', {}))]),
  h('div', {class: 'actions'}, save), status);
  return replace(box, form);
}
