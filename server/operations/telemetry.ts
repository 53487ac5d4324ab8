import { context } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader, type MetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { TelemetryConfig } from '../../shared/config.js';
import { Metrics, noMetrics } from './metrics.js';
import { SyncContextManager } from './trace-context.js';
import { noTelemetry, type Telemetry } from './observe.js';

export { noTelemetry, traced, type Telemetry } from './observe.js';

/**
 * Metrics go to the collector once a minute: OTLP's own default, and a Prometheus scrape interval
 * operators commonly use, so both views move at the same pace.
 */
const OTLP_METRICS_INTERVAL_MS = 60_000;

/**
 * The active span lasts for a synchronous call only, and work carries its context across awaits
 * itself (trace-context.ts); one manager serves every server in the process.
 */
let contextManager: SyncContextManager | undefined;
function enableContext(): void {
  if (contextManager) return;
  contextManager = new SyncContextManager();
  context.setGlobalContextManager(contextManager);
}

/** The SDK set up as `config` says (shared/config.ts, parsed once with the server's configuration). */
export function startTelemetry(config: TelemetryConfig): Telemetry {
  if (!config.enabled) return noTelemetry;
  const resource = resourceFromAttributes({ 'service.name': config.serviceName });
  const headers = config.otlpHeaders ?? {};
  const readers: MetricReader[] = [];
  let prometheus: PrometheusExporter | undefined;
  if (config.metricsListen || config.metricsToken) {
    // Served by our own listeners (operationsRouter), never by the exporter's own HTTP server.
    prometheus = new PrometheusExporter({ preventServerStart: true });
    readers.push(prometheus);
  }
  if (config.otlpEndpoint) {
    readers.push(
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: `${config.otlpEndpoint}/v1/metrics`, headers }),
        exportIntervalMillis: OTLP_METRICS_INTERVAL_MS,
      }),
    );
  }
  // One view over every instrument: its storage is shared by all readers, so a measurement with both
  // Prometheus and OTLP configured is aggregated once rather than once per reader. Its default
  // aggregation still takes each histogram's own buckets.
  const meterProvider = readers.length > 0 ? new MeterProvider({ resource, readers, views: [{ instrumentName: '*' }] }) : undefined;
  // No reader: the no-op instruments, and `noMetrics` itself, so the request layer is not even mounted.
  const metrics = meterProvider ? new Metrics(meterProvider.getMeter('pos')) : noMetrics;

  let tracerProvider: NodeTracerProvider | undefined;
  if (config.otlpEndpoint) {
    enableContext();
    tracerProvider = new NodeTracerProvider({
      resource,
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${config.otlpEndpoint}/v1/traces`, headers }))],
    });
  }
  const exporter = prometheus;
  return {
    metrics,
    tracer: tracerProvider?.getTracer('pos'),
    prometheus: exporter ? (req, res) => exporter.getMetricsRequestHandler(req, res) : undefined,
    flush: async () => {
      await Promise.all([tracerProvider?.forceFlush(), meterProvider?.forceFlush()]);
    },
    shutdown: async () => {
      await Promise.all([tracerProvider?.shutdown(), meterProvider?.shutdown()]);
    },
  };
}

