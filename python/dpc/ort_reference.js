#!/usr/bin/env node
// Runs an ONNX model with onnxruntime-node and exchanges tensors as .npy files.
//
//   node ort_reference.js MODEL.onnx INPUT_DIR OUTPUT_DIR [--threads N] [--optimize]
//
// Reads INPUT_DIR/<input>.npy for every graph input and writes
// OUTPUT_DIR/<output>.npy for every graph output. Tensor names map to file
// names by escaping '%' as %25 and '/' as %2F (exporters put '/' in names).
// Graph optimizations are off by default: this is a reference, and fusions
// change rounding. onnxruntime-node is found through NODE_PATH (see ort.py).
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

// .npy descr <-> onnxruntime tensor type and typed array. float16 travels as
// raw bits; strings and bfloat16 (no numpy dtype) are not supported.
const DTYPES = [
  ['<f4', 'float32', Float32Array],
  ['<f8', 'float64', Float64Array],
  ['<f2', 'float16', Uint16Array],
  ['<i8', 'int64', BigInt64Array],
  ['<i4', 'int32', Int32Array],
  ['<i2', 'int16', Int16Array],
  ['|i1', 'int8', Int8Array],
  ['<u8', 'uint64', BigUint64Array],
  ['<u4', 'uint32', Uint32Array],
  ['<u2', 'uint16', Uint16Array],
  ['|u1', 'uint8', Uint8Array],
  ['|b1', 'bool', Uint8Array],
];
const byDescr = new Map(DTYPES.map((d) => [d[0], d]));
const byType = new Map(DTYPES.map((d) => [d[1], d]));

const fileName = (name) => name.replace(/%/g, '%25').replace(/\//g, '%2F') + '.npy';

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY')
    throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !shape || /'fortran_order':\s*True/.test(header))
    throw new Error(`${file}: unsupported header ${header.trim()}`);
  const d = byDescr.get(descr[1]);
  if (!d) throw new Error(`${file}: unsupported dtype ${descr[1]}`);
  const dims = shape[1].split(',').filter((s) => s.trim()).map(Number);
  // Copy out: the data offset need not be aligned for the typed array.
  const bytes = buf.subarray(start + headerLen);
  const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);
  return new ort.Tensor(d[1], new d[2](ab), dims);
}

function writeNpy(file, tensor) {
  const d = byType.get(tensor.type);
  if (!d) throw new Error(`${file}: unsupported output type ${tensor.type}`);
  const shape = tensor.dims.length === 1 ? `${tensor.dims[0]},` : tensor.dims.join(', ');
  let header = `{'descr': '${d[0]}', 'fortran_order': False, 'shape': (${shape}), }`;
  // Version 1.0: 10 magic/length bytes + header, padded with spaces and a
  // newline to a multiple of 64 as numpy itself writes it.
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  fs.writeFileSync(file, Buffer.concat([
    pre, Buffer.from(header, 'latin1'),
    Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

async function main(argv) {
  const opts = { threads: 1, optimize: false };
  const pos = [];
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === '--threads') opts.threads = Number(argv[++i]);
    else if (argv[i] === '--optimize') opts.optimize = true;
    else pos.push(argv[i]);
  }
  if (pos.length !== 3) {
    console.error('usage: ort_reference.js MODEL.onnx INPUT_DIR OUTPUT_DIR [--threads N] [--optimize]');
    return 2;
  }
  const [model, inDir, outDir] = pos;
  const session = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: opts.optimize ? 'all' : 'disabled',
    intraOpNumThreads: opts.threads,
    interOpNumThreads: 1,
  });
  const feeds = {};
  for (const name of session.inputNames)
    feeds[name] = readNpy(path.join(inDir, fileName(name)));
  const results = await session.run(feeds);
  fs.mkdirSync(outDir, { recursive: true });
  for (const name of session.outputNames)
    writeNpy(path.join(outDir, fileName(name)), results[name]);
  return 0;
}

main(process.argv.slice(2)).then((rc) => { process.exitCode = rc; }, (err) => {
  console.error(err.message || err);
  process.exitCode = 1;
});
