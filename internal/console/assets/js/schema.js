// Rendering of Iceberg schemas, partition specs and sort orders.
import {h, table, empty} from './dom.js';

// typeLabel names a type the way the spec writes it: list<int>,
// map<string, long>, struct<…>.
export function typeLabel(t) {
  if (typeof t === 'string') return t;
  if (!t) return '';
  if (t.type === 'list') return `list<${typeLabel(t.element)}>`;
  if (t.type === 'map') return `map<${typeLabel(t.key)}, ${typeLabel(t.value)}>`;
  if (t.type === 'struct') return 'struct';
  return String(t.type);
}

// flatten lists every field of a schema depth-first, nested list elements
// and map keys and values included, each with its depth.
export function flatten(fields, depth = 0, out = []) {
  for (const f of fields || []) {
    out.push({id: f.id, name: f.name, type: f.type, required: !!f.required, doc: f.doc, depth});
    nested(f.type, depth + 1, out);
  }
  return out;
}

function nested(t, depth, out) {
  if (!t || typeof t !== 'object') return;
  if (t.type === 'struct') flatten(t.fields, depth, out);
  else if (t.type === 'list') {
    out.push({id: t['element-id'], name: 'element', type: t.element, required: !!t['element-required'], depth});
    nested(t.element, depth + 1, out);
  } else if (t.type === 'map') {
    out.push({id: t['key-id'], name: 'key', type: t.key, required: true, depth});
    nested(t.key, depth + 1, out);
    out.push({id: t['value-id'], name: 'value', type: t.value, required: !!t['value-required'], depth});
    nested(t.value, depth + 1, out);
  }
}

// schemaTable renders a schema with field ids, nesting, required and
// identifier marks.
export function schemaTable(schema, id) {
  if (!schema) return empty('No schema.');
  const ident = new Set(schema['identifier-field-ids'] || []);
  const rows = flatten(schema.fields).map((f) => h('tr', {'data-field-id': f.id},
    h('td', {class: 'num'}, f.id),
    h('td', {class: 'mono'}, h('span', {class: 'indent d' + Math.min(f.depth, 8)}, f.depth ? '└ ' : ''), f.name),
    h('td', {class: 'mono'}, typeLabel(f.type)),
    h('td', {}, f.required ? 'required' : 'optional'),
    h('td', {}, ident.has(f.id) ? 'identifier' : ''),
    h('td', {}, f.doc || '')));
  return table(['Id', 'Name', 'Type', 'Required', 'Identifier', 'Doc'], rows, {id, 'data-schema-id': schema['schema-id']});
}

// fieldName finds a field's dotted name by id in a schema.
export function fieldName(schema, id) {
  const f = flatten(schema ? schema.fields : []).find((x) => x.id === id);
  return f ? f.name : `#${id}`;
}

// specsTable lists every partition spec, the default one marked.
export function specsTable(meta, schema) {
  const specs = meta['partition-specs'] || [];
  const cur = meta['default-spec-id'];
  const rows = specs.map((s) => h('tr', {'data-spec-id': s['spec-id'], class: s['spec-id'] === cur ? 'current' : ''},
    h('td', {class: 'num'}, s['spec-id']),
    h('td', {}, s['spec-id'] === cur ? 'current' : 'earlier'),
    h('td', {class: 'mono'}, (s.fields || []).length
      ? s.fields.map((f) => `${f.name}: ${f.transform}(${fieldName(schema, f['source-id'])}) [${f['field-id']}]`).join(', ')
      : 'unpartitioned')));
  return table(['Spec id', '', 'Fields'], rows, {id: 'partition-specs'});
}

// sortOrdersTable lists every sort order, the default one marked.
export function sortOrdersTable(meta, schema) {
  const orders = meta['sort-orders'] || [];
  const cur = meta['default-sort-order-id'];
  const rows = orders.map((o) => h('tr', {class: o['order-id'] === cur ? 'current' : ''},
    h('td', {class: 'num'}, o['order-id']),
    h('td', {}, o['order-id'] === cur ? 'current' : 'earlier'),
    h('td', {class: 'mono'}, (o.fields || []).length
      ? o.fields.map((f) => `${f.transform}(${fieldName(schema, f['source-id'])}) ${f.direction} ${f['null-order']}`).join(', ')
      : 'unsorted')));
  return table(['Order id', '', 'Fields'], rows, {id: 'sort-orders'});
}
