//! One manifest of every kind krt-sim serves for writing, written the way
//! charts write them: with fields the API server defaults or canonicalizes
//! (quantities in other units, probes, named ports, int-or-string target
//! ports, claim templates, ports with no protocol, empty securityContexts,
//! Secret `stringData`, ...). The namespaced ones live in [`NAMESPACE`], which
//! the first row creates; a custom resource (`Widget`) follows its CRD.

/// One kind of the table: how to reach it, and its manifest.
#[derive(Debug)]
pub struct KindSample {
    /// `v1`, `apps/v1`.
    pub api_version: &'static str,
    /// `Deployment`.
    pub kind: &'static str,
    /// The resource in paths: `deployments`.
    pub plural: &'static str,
    /// Whether its objects live in a namespace ([`NAMESPACE`]).
    pub namespaced: bool,
    /// The manifest, as charts write it.
    pub yaml: &'static str,
}

impl KindSample {
    /// The collection's path: `/api/v1/namespaces/idem/pods`, `/apis/apps/v1/deployments`.
    pub fn url(&self) -> String {
        let root = match self.api_version {
            "v1" => "/api/v1".to_owned(),
            group_version => format!("/apis/{group_version}"),
        };
        match self.namespaced {
            true => format!("{root}/namespaces/{NAMESPACE}/{}", self.plural),
            false => format!("{root}/{}", self.plural),
        }
    }
}

/// The namespace of the table's namespaced objects (the first row creates it).
pub const NAMESPACE: &str = "idem";

/// One manifest per kind krt-sim serves for writing: at its group's preferred version, or, for a
/// kind only an alpha or beta version serves (ClusterTrustBundle, PodGroup), at that version.
pub const KINDS: &[KindSample] = &[
    KindSample {
        api_version: "v1",
        kind: "Namespace",
        plural: "namespaces",
        namespaced: false,
        yaml: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: idem\n  labels:\n    team: shop\n",
    },
    KindSample {
        api_version: "v1",
        kind: "ConfigMap",
        plural: "configmaps",
        namespaced: true,
        yaml: r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
  namespace: idem
  labels: {}
  annotations: {}
data:
  LOG_LEVEL: info
  PORT: "8080"
"#,
    },
    KindSample {
        api_version: "v1",
        kind: "Secret",
        plural: "secrets",
        namespaced: true,
        yaml: r#"apiVersion: v1
kind: Secret
metadata:
  name: web-secret
  namespace: idem
stringData:
  password: hunter2
data:
  token: dG9rZW4=
"#,
    },
    KindSample {
        api_version: "v1",
        kind: "ServiceAccount",
        plural: "serviceaccounts",
        namespaced: true,
        yaml: "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: web\n  namespace: idem\n",
    },
    KindSample {
        api_version: "v1",
        kind: "Service",
        plural: "services",
        namespaced: true,
        yaml: r#"apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: idem
spec:
  selector:
    app: web
  ports:
  - name: http
    port: 80
    targetPort: http
  - name: metrics
    port: 9090
    targetPort: 9090
  - name: admin
    port: 8081
"#,
    },
    KindSample {
        api_version: "apps/v1",
        kind: "Deployment",
        plural: "deployments",
        namespaced: true,
        yaml: r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: idem
  labels:
    app: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      securityContext: {}
      serviceAccountName: web
      containers:
      - name: web
        image: nginx:1.27
        ports:
        - name: http
          containerPort: 8080
        resources:
          requests:
            cpu: 1000m
            memory: 1024Mi
          limits:
            memory: 2048Mi
        readinessProbe:
          httpGet:
            path: /healthz
            port: http
        livenessProbe:
          tcpSocket:
            port: 8080
        securityContext: {}
        envFrom:
        - configMapRef:
            name: web-config
"#,
    },
    KindSample {
        api_version: "apps/v1",
        kind: "StatefulSet",
        plural: "statefulsets",
        namespaced: true,
        yaml: r#"apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: idem
spec:
  serviceName: db
  replicas: 1
  selector:
    matchLabels:
      app: db
  template:
    metadata:
      labels:
        app: db
    spec:
      containers:
      - name: db
        image: postgres:16
        ports:
        - name: pg
          containerPort: 5432
        resources:
          requests:
            memory: 512Mi
            cpu: "0.5"
        volumeMounts:
        - name: data
          mountPath: /var/lib/postgresql
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: [ReadWriteOnce]
      resources:
        requests:
          storage: 1024Mi
"#,
    },
    KindSample {
        api_version: "apps/v1",
        kind: "DaemonSet",
        plural: "daemonsets",
        namespaced: true,
        yaml: r#"apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
  namespace: idem
spec:
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
    spec:
      containers:
      - name: agent
        image: fluent-bit:3.0
        ports:
        - containerPort: 2020
        resources:
          limits:
            cpu: 200m
            memory: 0.25Gi
"#,
    },
    KindSample {
        api_version: "apps/v1",
        kind: "ReplicaSet",
        plural: "replicasets",
        namespaced: true,
        yaml: r#"apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: cache
  namespace: idem
spec:
  replicas: 1
  selector:
    matchLabels:
      app: cache
  template:
    metadata:
      labels:
        app: cache
    spec:
      containers:
      - name: redis
        image: redis:7
        ports:
        - containerPort: 6379
          protocol: TCP
"#,
    },
    KindSample {
        api_version: "v1",
        kind: "Pod",
        plural: "pods",
        namespaced: true,
        yaml: r#"apiVersion: v1
kind: Pod
metadata:
  name: debug
  namespace: idem
spec:
  containers:
  - name: shell
    image: busybox:1.36
    command: [sleep, infinity]
    resources:
      requests:
        cpu: 100m
        memory: 64Mi
"#,
    },
    KindSample {
        api_version: "batch/v1",
        kind: "Job",
        plural: "jobs",
        namespaced: true,
        yaml: r#"apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  namespace: idem
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: busybox:1.36
        command: ["true"]
        resources:
          requests:
            memory: 128Mi
"#,
    },
    KindSample {
        api_version: "batch/v1",
        kind: "CronJob",
        plural: "cronjobs",
        namespaced: true,
        yaml: r#"apiVersion: batch/v1
kind: CronJob
metadata:
  name: report
  namespace: idem
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: report
            image: busybox:1.36
"#,
    },
    KindSample {
        api_version: "v1",
        kind: "PersistentVolume",
        plural: "persistentvolumes",
        namespaced: false,
        yaml: r#"apiVersion: v1
kind: PersistentVolume
metadata:
  name: idem-pv
spec:
  capacity:
    storage: 2048Mi
  accessModes: [ReadWriteOnce]
  hostPath:
    path: /tmp/idem
"#,
    },
    KindSample {
        api_version: "v1",
        kind: "PersistentVolumeClaim",
        plural: "persistentvolumeclaims",
        namespaced: true,
        yaml: r#"apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: uploads
  namespace: idem
  annotations:
    krt.dev/wait: exists
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 1024Mi
"#,
    },
    KindSample {
        api_version: "storage.k8s.io/v1",
        kind: "StorageClass",
        plural: "storageclasses",
        namespaced: false,
        yaml: "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: idem-fast\nprovisioner: example.com/fast\n",
    },
    KindSample {
        api_version: "networking.k8s.io/v1",
        kind: "Ingress",
        plural: "ingresses",
        namespaced: true,
        yaml: r#"apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: idem
  annotations:
    krt.dev/wait: exists
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: web
            port:
              name: http
"#,
    },
    KindSample {
        api_version: "networking.k8s.io/v1",
        kind: "IngressClass",
        plural: "ingressclasses",
        namespaced: false,
        yaml: "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata:\n  name: idem-nginx\nspec:\n  controller: example.com/ingress-nginx\n",
    },
    KindSample {
        api_version: "networking.k8s.io/v1",
        kind: "NetworkPolicy",
        plural: "networkpolicies",
        namespaced: true,
        yaml: r#"apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: db
  namespace: idem
spec:
  podSelector:
    matchLabels:
      app: db
  ingress:
  - from:
    - podSelector:
        matchLabels:
          app: web
    ports:
    - port: 5432
    - port: pg
"#,
    },
    KindSample {
        api_version: "policy/v1",
        kind: "PodDisruptionBudget",
        plural: "poddisruptionbudgets",
        namespaced: true,
        yaml: r#"apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
  namespace: idem
  annotations:
    krt.dev/wait: exists
spec:
  minAvailable: 1
  selector:
    matchLabels:
      app: web
"#,
    },
    KindSample {
        api_version: "autoscaling/v2",
        kind: "HorizontalPodAutoscaler",
        plural: "horizontalpodautoscalers",
        namespaced: true,
        yaml: r#"apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  namespace: idem
  annotations:
    krt.dev/wait: exists
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: web
  maxReplicas: 4
  metrics:
  - type: Resource
    resource:
      name: memory
      target:
        type: AverageValue
        averageValue: 1024Mi
"#,
    },
    KindSample {
        api_version: "discovery.k8s.io/v1",
        kind: "EndpointSlice",
        plural: "endpointslices",
        namespaced: true,
        yaml: r#"apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: external-db
  namespace: idem
addressType: IPv4
endpoints:
- addresses: ["10.0.0.5"]
ports:
- name: pg
  port: 5432
"#,
    },
    KindSample {
        api_version: "coordination.k8s.io/v1",
        kind: "Lease",
        plural: "leases",
        namespaced: true,
        yaml: "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: leader\n  namespace: idem\nspec:\n  holderIdentity: web-0\n  leaseDurationSeconds: 15\n",
    },
    KindSample {
        api_version: "v1",
        kind: "Event",
        plural: "events",
        namespaced: true,
        yaml: r#"apiVersion: v1
kind: Event
metadata:
  name: deployed
  namespace: idem
involvedObject:
  apiVersion: apps/v1
  kind: Deployment
  name: web
  namespace: idem
reason: Deployed
message: deployed by the idempotence suite
type: Normal
"#,
    },
    KindSample {
        api_version: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        plural: "customresourcedefinitions",
        namespaced: false,
        yaml: r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    kind: Widget
    plural: widgets
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size:
                type: string
              replicas:
                type: integer
                default: 1
"#,
    },
    KindSample {
        api_version: "example.com/v1",
        kind: "Widget",
        plural: "widgets",
        namespaced: true,
        yaml: "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: blue\n  namespace: idem\nspec:\n  size: large\n",
    },
    KindSample {
        api_version: "v1",
        kind: "LimitRange",
        plural: "limitranges",
        namespaced: true,
        yaml: r#"apiVersion: v1
kind: LimitRange
metadata:
  name: defaults
  namespace: idem
spec:
  limits:
  - type: Container
    default:
      cpu: 500m
      memory: 1024Mi
    defaultRequest:
      cpu: 100m
      memory: 128Mi
"#,
    },
    KindSample {
        api_version: "v1",
        kind: "ResourceQuota",
        plural: "resourcequotas",
        namespaced: true,
        yaml: r#"apiVersion: v1
kind: ResourceQuota
metadata:
  name: compute
  namespace: idem
spec:
  hard:
    pods: "20"
    requests.cpu: "4"
    requests.memory: 8192Mi
"#,
    },
    KindSample {
        api_version: "v1",
        kind: "ReplicationController",
        plural: "replicationcontrollers",
        namespaced: true,
        yaml: r#"apiVersion: v1
kind: ReplicationController
metadata:
  name: legacy
  namespace: idem
spec:
  replicas: 1
  selector:
    app: legacy
  template:
    metadata:
      labels:
        app: legacy
    spec:
      containers:
      - name: app
        image: nginx:1.27
        ports:
        - containerPort: 80
"#,
    },
    KindSample {
        api_version: "v1",
        kind: "PodTemplate",
        plural: "podtemplates",
        namespaced: true,
        yaml: r#"apiVersion: v1
kind: PodTemplate
metadata:
  name: worker
  namespace: idem
template:
  metadata:
    labels:
      app: worker
  spec:
    containers:
    - name: worker
      image: busybox:1.36
      command: [sleep, "3600"]
      resources:
        limits:
          memory: 64Mi
"#,
    },
    KindSample {
        api_version: "v1",
        kind: "Endpoints",
        plural: "endpoints",
        namespaced: true,
        yaml: r#"apiVersion: v1
kind: Endpoints
metadata:
  name: external-db
  namespace: idem
subsets:
- addresses:
  - ip: 10.0.0.12
  ports:
  - name: postgres
    port: 5432
"#,
    },
    KindSample {
        api_version: "v1",
        kind: "Node",
        plural: "nodes",
        namespaced: false,
        yaml: r#"apiVersion: v1
kind: Node
metadata:
  name: edge-1
  labels:
    topology.kubernetes.io/zone: edge
spec:
  unschedulable: true
"#,
    },
    KindSample {
        api_version: "events.k8s.io/v1",
        kind: "Event",
        plural: "events",
        namespaced: true,
        yaml: r#"apiVersion: events.k8s.io/v1
kind: Event
metadata:
  name: web-config.deployed
  namespace: idem
eventTime: "2026-01-01T00:00:00.000000Z"
reportingController: krt.dev/tests
reportingInstance: tests-1
action: Deployed
reason: Deployed
type: Normal
note: deployed by a chart
regarding:
  apiVersion: v1
  kind: ConfigMap
  name: web-config
  namespace: idem
"#,
    },
    KindSample {
        api_version: "admissionregistration.k8s.io/v1",
        kind: "MutatingWebhookConfiguration",
        plural: "mutatingwebhookconfigurations",
        namespaced: false,
        yaml: r#"apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: idem-injector
webhooks:
- name: inject.idem.example.com
  clientConfig:
    url: https://injector.example.com/mutate
  # Only objects that ask for it: no object of the suite does, so a real API server never
  # calls this unreachable webhook for them.
  objectSelector:
    matchLabels:
      idem.example.com/webhooks: "on"
  rules:
  - operations: [CREATE]
    apiGroups: [""]
    apiVersions: [v1]
    resources: [pods]
  admissionReviewVersions: [v1]
  sideEffects: None
"#,
    },
    KindSample {
        api_version: "admissionregistration.k8s.io/v1",
        kind: "ValidatingWebhookConfiguration",
        plural: "validatingwebhookconfigurations",
        namespaced: false,
        yaml: r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: idem-checker
webhooks:
- name: check.idem.example.com
  clientConfig:
    url: https://checker.example.com/validate
  # Only objects that ask for it: no object of the suite does, so a real API server never
  # calls this unreachable webhook for them.
  objectSelector:
    matchLabels:
      idem.example.com/webhooks: "on"
  rules:
  - operations: [CREATE, UPDATE]
    apiGroups: [apps]
    apiVersions: [v1]
    resources: [deployments]
  admissionReviewVersions: [v1]
  sideEffects: None
"#,
    },
    KindSample {
        api_version: "admissionregistration.k8s.io/v1",
        kind: "ValidatingAdmissionPolicy",
        plural: "validatingadmissionpolicies",
        namespaced: false,
        yaml: r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: replica-limit
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [deployments]
  validations:
  - expression: object.spec.replicas <= 5
"#,
    },
    KindSample {
        api_version: "admissionregistration.k8s.io/v1",
        kind: "ValidatingAdmissionPolicyBinding",
        plural: "validatingadmissionpolicybindings",
        namespaced: false,
        yaml: r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: replica-limit
spec:
  policyName: replica-limit
  validationActions: [Deny]
"#,
    },
    KindSample {
        api_version: "admissionregistration.k8s.io/v1",
        kind: "MutatingAdmissionPolicy",
        plural: "mutatingadmissionpolicies",
        namespaced: false,
        yaml: r#"apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata:
  name: gadget-owner
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [example.com]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [gadgets]
  reinvocationPolicy: Never
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"owner": "shop"}}}'
"#,
    },
    KindSample {
        api_version: "admissionregistration.k8s.io/v1",
        kind: "MutatingAdmissionPolicyBinding",
        plural: "mutatingadmissionpolicybindings",
        namespaced: false,
        yaml: r#"apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: gadget-owner
spec:
  policyName: gadget-owner
"#,
    },
    KindSample {
        api_version: "certificates.k8s.io/v1",
        kind: "CertificateSigningRequest",
        plural: "certificatesigningrequests",
        namespaced: false,
        yaml: r#"apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata:
  name: idem-client
spec:
  request: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIUE1IZ0NBUUF3RmpFVU1CSUdBMVVFQXd3TGFXUmxiUzFqYkdsbGJuUXdXVEFUQmdjcWhrak9QUUlCQmdncQpoa2pPUFFNQkJ3TkNBQVNRUFN1WS83RkJoU2crU0lYZGdNbkZ3U3ZtV3U1allSMnRjRlpjaUtNTlQwTjBCbmVtCndRQVp4WjJ6ZC9LZ21FOFZXWTZLVjlkWE9URHhObHJHRVRyTG9BQXdDZ1lJS29aSXpqMEVBd0lEUndBd1JBSWcKY2sya0RMTWV6Zk9pbFR1YlVzdWZ3YXpxVlV4VXNDN2krdytlZmtMVjFpb0NJQjBuWFAwbFFmd2c3SktOV1hvdgpyY1U5bEluNzRWS2RtQVhaMVhDWnZVQTIKLS0tLS1FTkQgQ0VSVElGSUNBVEUgUkVRVUVTVC0tLS0tCg==
  signerName: example.com/client
  usages: [client auth]
"#,
    },
    KindSample {
        api_version: "scheduling.k8s.io/v1",
        kind: "PriorityClass",
        plural: "priorityclasses",
        namespaced: false,
        yaml: r#"apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: idem-high
value: 100000
globalDefault: false
description: for the shop's frontends
"#,
    },
    KindSample {
        api_version: "node.k8s.io/v1",
        kind: "RuntimeClass",
        plural: "runtimeclasses",
        namespaced: false,
        yaml: r#"apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: gvisor
handler: runsc
"#,
    },
    KindSample {
        api_version: "storage.k8s.io/v1",
        kind: "CSIDriver",
        plural: "csidrivers",
        namespaced: false,
        yaml: r#"apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata:
  name: csi.idem.example.com
spec:
  attachRequired: false
  podInfoOnMount: true
"#,
    },
    KindSample {
        api_version: "storage.k8s.io/v1",
        kind: "CSINode",
        plural: "csinodes",
        namespaced: false,
        yaml: r#"apiVersion: storage.k8s.io/v1
kind: CSINode
metadata:
  name: edge-1
spec:
  drivers:
  - name: csi.idem.example.com
    nodeID: edge-1
"#,
    },
    KindSample {
        api_version: "storage.k8s.io/v1",
        kind: "CSIStorageCapacity",
        plural: "csistoragecapacities",
        namespaced: true,
        yaml: r#"apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata:
  name: edge-capacity
  namespace: idem
storageClassName: standard
capacity: 102400Mi
"#,
    },
    KindSample {
        api_version: "storage.k8s.io/v1",
        kind: "VolumeAttachment",
        plural: "volumeattachments",
        namespaced: false,
        yaml: r#"apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata:
  name: edge-attachment
spec:
  attacher: csi.idem.example.com
  nodeName: edge-1
  source:
    persistentVolumeName: edge-volume
"#,
    },
    KindSample {
        api_version: "storage.k8s.io/v1",
        kind: "VolumeAttributesClass",
        plural: "volumeattributesclasses",
        namespaced: false,
        yaml: r#"apiVersion: storage.k8s.io/v1
kind: VolumeAttributesClass
metadata:
  name: idem-gold
driverName: csi.idem.example.com
parameters:
  iops: "3000"
"#,
    },
    KindSample {
        api_version: "flowcontrol.apiserver.k8s.io/v1",
        kind: "PriorityLevelConfiguration",
        plural: "prioritylevelconfigurations",
        namespaced: false,
        yaml: r#"apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata:
  name: idem-batch
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 10
    limitResponse:
      type: Reject
"#,
    },
    KindSample {
        api_version: "flowcontrol.apiserver.k8s.io/v1",
        kind: "FlowSchema",
        plural: "flowschemas",
        namespaced: false,
        yaml: r#"apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata:
  name: idem-batch
spec:
  priorityLevelConfiguration:
    name: idem-batch
  matchingPrecedence: 5000
  rules:
  - subjects:
    - kind: ServiceAccount
      serviceAccount:
        name: web
        namespace: idem
    resourceRules:
    - verbs: [list]
      apiGroups: [""]
      resources: [configmaps]
      namespaces: [idem]
"#,
    },
    KindSample {
        api_version: "resource.k8s.io/v1",
        kind: "DeviceClass",
        plural: "deviceclasses",
        namespaced: false,
        yaml: r#"apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: idem-gpu
spec:
  selectors:
  - cel:
      expression: device.driver == "gpu.idem.example.com"
"#,
    },
    KindSample {
        api_version: "resource.k8s.io/v1",
        kind: "ResourceClaim",
        plural: "resourceclaims",
        namespaced: true,
        yaml: r#"apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: gpu
  namespace: idem
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: idem-gpu
"#,
    },
    KindSample {
        api_version: "resource.k8s.io/v1",
        kind: "ResourceClaimTemplate",
        plural: "resourceclaimtemplates",
        namespaced: true,
        yaml: r#"apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: gpu
  namespace: idem
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: idem-gpu
"#,
    },
    KindSample {
        api_version: "resource.k8s.io/v1",
        kind: "ResourceSlice",
        plural: "resourceslices",
        namespaced: false,
        yaml: r#"apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: edge-1-gpus
spec:
  driver: gpu.idem.example.com
  nodeName: edge-1
  pool:
    name: edge-1
    generation: 1
    resourceSliceCount: 1
  devices:
  - name: gpu-0
"#,
    },
    KindSample {
        api_version: "storagemigration.k8s.io/v1beta1",
        kind: "StorageVersionMigration",
        plural: "storageversionmigrations",
        namespaced: false,
        yaml: r#"apiVersion: storagemigration.k8s.io/v1beta1
kind: StorageVersionMigration
metadata:
  name: deployments
spec:
  resource:
    group: apps
    resource: deployments
"#,
    },
    KindSample {
        api_version: "networking.k8s.io/v1",
        kind: "ServiceCIDR",
        plural: "servicecidrs",
        namespaced: false,
        yaml: r#"apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata:
  name: idem-extra
spec:
  cidrs: [10.100.0.0/24]
"#,
    },
    KindSample {
        api_version: "networking.k8s.io/v1",
        kind: "IPAddress",
        plural: "ipaddresses",
        namespaced: false,
        yaml: r#"apiVersion: networking.k8s.io/v1
kind: IPAddress
metadata:
  name: 10.100.0.10
spec:
  parentRef:
    group: ""
    resource: services
    name: web
    namespace: idem
"#,
    },
    KindSample {
        api_version: "apps/v1",
        kind: "ControllerRevision",
        plural: "controllerrevisions",
        namespaced: true,
        yaml: r#"apiVersion: apps/v1
kind: ControllerRevision
metadata:
  name: web-1
  namespace: idem
revision: 1
data:
  spec:
    template:
      metadata:
        labels:
          app: web
"#,
    },
    KindSample {
        api_version: "apiregistration.k8s.io/v1",
        kind: "APIService",
        plural: "apiservices",
        namespaced: false,
        yaml: r#"apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.metrics.idem.example.com
  annotations:
    # Nothing serves it: never Available, here as on a cluster without the backend.
    krt.dev/wait: exists
spec:
  group: metrics.idem.example.com
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  insecureSkipTLSVerify: true
  service:
    name: web
    namespace: idem
    port: 443
"#,
    },
    KindSample {
        api_version: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        plural: "clusterroles",
        namespaced: false,
        yaml: r#"apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: idem-reader
rules:
- apiGroups: [""]
  resources: [configmaps, secrets]
  verbs: [get, list, watch]
- nonResourceURLs: [/healthz]
  verbs: [get]
"#,
    },
    KindSample {
        api_version: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        plural: "clusterrolebindings",
        namespaced: false,
        yaml: r#"apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: idem-reader
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: idem-reader
subjects:
- kind: ServiceAccount
  name: web
  namespace: idem
"#,
    },
    KindSample {
        api_version: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        plural: "roles",
        namespaced: true,
        yaml: r#"apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: web
  namespace: idem
rules:
- apiGroups: [apps]
  resources: [deployments, deployments/scale]
  verbs: [get, patch]
"#,
    },
    KindSample {
        api_version: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        plural: "rolebindings",
        namespaced: true,
        yaml: r#"apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: web
  namespace: idem
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: web
subjects:
- kind: ServiceAccount
  name: web
- kind: Group
  apiGroup: rbac.authorization.k8s.io
  name: shop-admins
"#,
    },
    KindSample {
        api_version: "internal.apiserver.k8s.io/v1alpha1",
        kind: "StorageVersion",
        plural: "storageversions",
        namespaced: false,
        yaml: r#"apiVersion: internal.apiserver.k8s.io/v1alpha1
kind: StorageVersion
metadata:
  name: apps.deployments
spec: {}
"#,
    },
    KindSample {
        api_version: "certificates.k8s.io/v1beta1",
        kind: "ClusterTrustBundle",
        plural: "clustertrustbundles",
        namespaced: false,
        yaml: r#"apiVersion: certificates.k8s.io/v1beta1
kind: ClusterTrustBundle
metadata:
  name: idem-roots
spec:
  trustBundle: |
    -----BEGIN CERTIFICATE-----
    MIIBjzCCATWgAwIBAgIUJH+xFx24UXtS7kmusDInUNMXThIwCgYIKoZIzj0EAwIw
    FDESMBAGA1UEAwwJaWRlbS1yb290MCAXDTI2MTIwNDIwMjU0MloYDzIxMjYxMTEw
    MjAyNTQyWjAUMRIwEAYDVQQDDAlpZGVtLXJvb3QwWTATBgcqhkjOPQIBBggqhkjO
    PQMBBwNCAARvV27qfn6dSfhouvJMh61Ijqo4wiy+5vl0Yff6148covy9t910qtOo
    lYNtLs4pCR9KikFnLrSXvp8z3Wyu/GNyo2MwYTAdBgNVHQ4EFgQUC4zYHth4dmUP
    pYf1ntCSKfHo9+EwHwYDVR0jBBgwFoAUC4zYHth4dmUPpYf1ntCSKfHo9+EwDwYD
    VR0TAQH/BAUwAwEB/zAOBgNVHQ8BAf8EBAMCAgQwCgYIKoZIzj0EAwIDSAAwRQIg
    AbXmqkNKD0QHm8/ZI3LWKHLy80c6QN/DSLDujRrqxscCIQChHiCjTD36JGATi3Lp
    +s0GFDzDqt9dHjEU6XMyz8Fy1Q==
    -----END CERTIFICATE-----
"#,
    },
    KindSample {
        api_version: "coordination.k8s.io/v1beta1",
        kind: "LeaseCandidate",
        plural: "leasecandidates",
        namespaced: true,
        yaml: r#"apiVersion: coordination.k8s.io/v1beta1
kind: LeaseCandidate
metadata:
  name: leader-a
  namespace: idem
spec:
  leaseName: leader
  binaryVersion: 1.36.0
  emulationVersion: 1.36.0
  strategy: OldestEmulationVersion
"#,
    },
    KindSample {
        api_version: "scheduling.k8s.io/v1alpha2",
        kind: "Workload",
        plural: "workloads",
        namespaced: true,
        yaml: r#"apiVersion: scheduling.k8s.io/v1alpha2
kind: Workload
metadata:
  name: training
  namespace: idem
spec:
  podGroupTemplates:
  - name: workers
    schedulingPolicy:
      gang:
        minCount: 4
"#,
    },
    KindSample {
        api_version: "scheduling.k8s.io/v1alpha2",
        kind: "PodGroup",
        plural: "podgroups",
        namespaced: true,
        yaml: r#"apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata:
  name: training-workers
  namespace: idem
spec:
  podGroupTemplateRef:
    workload:
      workloadName: training
      podGroupTemplateName: workers
  schedulingPolicy:
    gang:
      minCount: 4
"#,
    },
    KindSample {
        api_version: "resource.k8s.io/v1beta2",
        kind: "DeviceTaintRule",
        plural: "devicetaintrules",
        namespaced: false,
        yaml: r#"apiVersion: resource.k8s.io/v1beta2
kind: DeviceTaintRule
metadata:
  name: idem-maintenance
spec:
  deviceSelector:
    driver: gpu.idem.example.com
    pool: edge-1
  taint:
    key: example.com/maintenance
    value: planned
    effect: NoSchedule
"#,
    },
    KindSample {
        api_version: "resource.k8s.io/v1alpha3",
        kind: "ResourcePoolStatusRequest",
        plural: "resourcepoolstatusrequests",
        namespaced: false,
        yaml: r#"apiVersion: resource.k8s.io/v1alpha3
kind: ResourcePoolStatusRequest
metadata:
  name: idem-gpus
spec:
  driver: gpu.idem.example.com
"#,
    },
];
