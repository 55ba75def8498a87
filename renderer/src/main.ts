/**
 * Entry point: picks the transport (Electron preload or WebSocket to `tally serve`) and mounts the popover.
 */
import { mount } from 'svelte';
import { config } from 'zod';
import App from './App.svelte';
import { getBridge } from './lib/bridge.js';
import { forwardPageErrors } from './lib/error-report.js';
import './app.css';

// The strict CSP has no 'unsafe-eval': keep zod from probing `new Function` (which logs a CSP violation).
config({ jitless: true });

const { bridge, connection } = getBridge();
// What the page does not catch reaches the log (the core's event trail), over whichever transport this is.
forwardPageErrors(window, bridge);
const target = document.getElementById('app');
if (!target) throw new Error('Missing #app element');
mount(App, { target, props: { bridge, connection } });
