/**
 * What a face that runs the receive service itself (`tally listen`) hands it to open: its settings, environment
 * and flags become the pipeline's options through the one `pipelineOptions` of every face (the app core's
 * app-pipeline.ts calls it too), and its tunnel flags are read the way the settings' tunnel fields are.
 */
import { pipelineOptions, type PipelineInputs } from '../pipeline/options.js';
import { parseTunnelFlag, type TunnelSettingsInput } from '../tunnels/index.js';

/** The tunnel a face's flags ask for, over the tunnel settings (each field: the flag wins when given). */
export type TunnelFlags = Partial<TunnelSettingsInput>;

/** A face's settings, environment, credentials and flags, as `receiveOptions` takes them. */
export type ReceiveInputs = PipelineInputs;

/** The options `ReceiveService.open` takes, and the studio mode they ask for (`--team`, or the studio setting). */
export function receiveOptions(inputs: ReceiveInputs): ReturnType<typeof pipelineOptions> {
  return pipelineOptions(inputs);
}

/**
 * `--tunnel none|ngrok|localtunnel|<public https URL>`, `--ngrok-domain` and `--localtunnel-host` as tunnel fields.
 * @throws ValidationError with a message fit for a usage error (a bad `--tunnel`).
 */
export function tunnelFlags(flags: { tunnel?: string; ngrokDomain?: string; localtunnelHost?: string }): TunnelFlags {
  return {
    ...(flags.ngrokDomain === undefined ? {} : { ngrokDomain: flags.ngrokDomain }),
    ...(flags.localtunnelHost === undefined ? {} : { localtunnelHost: flags.localtunnelHost }),
    ...(flags.tunnel === undefined ? {} : parseTunnelFlag(flags.tunnel)),
  };
}
