import type { Attributes } from '@opentelemetry/api';
import {
  AggregationTemporality,
  DataPointType,
  MeterProvider,
  MetricReader,
  type Histogram,
  type MetricData,
} from '@opentelemetry/sdk-metrics';

/** A reader that exports nothing by itself: the test collects when it wants to look. */
class OnDemandReader extends MetricReader {
  protected async onShutdown(): Promise<void> {}
  protected async onForceFlush(): Promise<void> {}
}

/** One collection, by instrument name. */
export class Collected {
  constructor(private readonly byName: Map<string, MetricData>) {}

  names(): string[] {
    return [...this.byName.keys()].sort();
  }

  metric(name: string): MetricData | undefined {
    return this.byName.get(name);
  }

  /** The value of a counter or gauge at the point whose attributes include `attributes`; undefined without one. */
  value(name: string, attributes: Attributes = {}): number | undefined {
    const metric = this.byName.get(name);
    if (metric === undefined) return undefined;
    if (metric.dataPointType === DataPointType.HISTOGRAM) throw new Error(`${name} is a histogram`);
    const point = metric.dataPoints.find((p) => matches(p.attributes, attributes));
    return point === undefined ? undefined : (point.value as number);
  }

  /** The histogram's point whose attributes include `attributes`. */
  histogram(name: string, attributes: Attributes = {}): Histogram | undefined {
    const metric = this.byName.get(name);
    if (metric === undefined) return undefined;
    if (metric.dataPointType !== DataPointType.HISTOGRAM) throw new Error(`${name} is not a histogram`);
    return metric.dataPoints.find((p) => matches(p.attributes, attributes))?.value;
  }

  /** Every point of `name`, as attributes and value (histograms: their count). */
  points(name: string): { attributes: Attributes; value: number }[] {
    const metric = this.byName.get(name);
    if (metric === undefined) return [];
    if (metric.dataPointType === DataPointType.HISTOGRAM) {
      return metric.dataPoints.map((p) => ({ attributes: p.attributes, value: p.value.count }));
    }
    return metric.dataPoints.map((p) => ({ attributes: p.attributes, value: p.value as number }));
  }
}

function matches(actual: Attributes, wanted: Attributes): boolean {
  return Object.entries(wanted).every(([key, value]) => actual[key] === value);
}

/**
 * An SDK meter provider with a reader the test collects from. Cumulative by default, as Prometheus reads; with
 * `delta`, a collection holds only the series observed or recorded since the previous one.
 */
export function testMeterProvider(temporality: 'cumulative' | 'delta' = 'cumulative'): {
  provider: MeterProvider;
  collect: () => Promise<Collected>;
} {
  const selected = temporality === 'delta' ? AggregationTemporality.DELTA : AggregationTemporality.CUMULATIVE;
  const reader = new OnDemandReader({ aggregationTemporalitySelector: () => selected });
  const provider = new MeterProvider({ readers: [reader] });
  return {
    provider,
    collect: async () => {
      const { resourceMetrics, errors } = await reader.collect();
      if (errors.length > 0) throw new AggregateError(errors, 'metric collection failed');
      const byName = new Map<string, MetricData>();
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const metric of scope.metrics) {
          // An instrument without points (no callback left, or nothing recorded) is as good as absent.
          if (metric.dataPoints.length > 0) byName.set(metric.descriptor.name, metric);
        }
      }
      return new Collected(byName);
    },
  };
}
