// Waits until the freshly started gnome-keyring answers writes: right after `--unlock` the daemon may
// still be creating and unlocking its login collection, and a write in that moment fails as "locked".
import { Entry } from '@napi-rs/keyring';

const deadline = Date.now() + 15_000;
for (;;) {
  try {
    const entry = new Entry('Tally-test-ready', 'probe');
    entry.setPassword('ready');
    entry.deletePassword();
    process.exit(0);
  } catch (error) {
    if (Date.now() > deadline) {
      console.error(`The test keyring did not become ready: ${error instanceof Error ? error.message : error}`);
      process.exit(1);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
