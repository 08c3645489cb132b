// A krt middleware in JavaScript (world `kusion:runtime/middleware`): labels every plan
// `app.kubernetes.io/managed-by: krt` (and `team`, from its `team` annotation), and refuses
// Services of type LoadBalancer in namespaces named `dev-*`. Everything else passes through.
import * as next from 'kusion:runtime/runtime@0.1.2';

const refuse = (message) => ({
  action: 'unchanged', retries: 0,
  status: { kind: 'error', code: 'illegal-manifest', reason: 'LoadBalancerInDev',
    message, retryable: false, causes: [] },
});

export const runtime = {
  apply(prior, plan, options) {
    if (plan) {
      const object = JSON.parse(plan.attributes);
      const meta = (object.metadata ??= {});
      const namespace = meta.namespace ?? options.defaultNamespace ?? 'default';
      if (object.kind === 'Service' && object.spec?.type === 'LoadBalancer'
          && namespace.startsWith('dev-')) {
        return refuse(`${plan.id}: Services of type LoadBalancer are not allowed in dev-* namespaces`);
      }
      const labels = (meta.labels ??= {});
      labels['app.kubernetes.io/managed-by'] = 'krt';
      if (meta.annotations?.team) labels.team = meta.annotations.team;
      plan = { ...plan, attributes: JSON.stringify(object) };
    }
    return next.apply(prior, plan, options);
  },
  read: (prior, plan, options) => next.read(prior, plan, options),
  delete: (resource, options) => next.delete(resource, options),
  watch: (resource, options) => next.watch(resource, options),
};
