// The registry login that actions/attest-build-provenance v4.1.0 would push its attestation
// with: it calls @sigstore/oci's getRegistryCredentials(subject-name) (actions/attest v4.1.0,
// src/attest.ts), which reads $HOME/.docker/config.json and nothing else.
//
//   HOME=DIR node .ci/sigstore-oci/registry-credentials.js IMAGE
//
// Prints one JSON line: {"ok": true, "username": ..., "password": ...} or {"ok": false, "error": ...}.
// tests/integration/test_attest_credentials.py compares it with release_files.py docker-auth.
'use strict';
// The module itself, not the package's index: the index also loads the registry client, whose
// fetch.js requires promise-retry without declaring it (the action's bundle has it hoisted from
// another dependency; a plain install of the package does not). The lookup is the same function.
const { getRegistryCredentials } = require('@sigstore/oci/dist/credentials.js');

const image = process.argv[2];
if (!image) {
  console.error('usage: node registry-credentials.js IMAGE (e.g. ghcr.io/owner/rag-ci)');
  process.exit(2);
}
let verdict;
try {
  const { username, password } = getRegistryCredentials(image);
  verdict = { ok: true, username, password };
} catch (err) {
  verdict = { ok: false, error: String(err && err.message ? err.message : err) };
}
console.log(JSON.stringify(verdict));
