/* The compiled launch path: kernel[range](*args) in C.

   Python decides once per (launcher, argument types) what a launch needs and hands it over as
   a Binding (dispatcher/launch.py); this file reads the arguments, finds their Binding in a
   small per-launcher cache, packs the kernel arguments in the order types/params.py describes,
   orders the launch (ordering.py's protocol), submits through dpctl's C API, keeps the
   arguments alive until the kernel completes and returns the dpctl.SyclEvent.
   Anything unexpected goes back to Python (Launcher.bind), which explains or compiles.

   No dpctl or dpnp header is needed to build it: the few C functions it calls are resolved at
   import from libDPCTLSyclInterface.so and dpctl's Cython capsules, and the two object layouts
   it reads (dpnp.tensor.usm_ndarray and dpctl.memory's USM memory) are declared below and
   checked against live objects by check_layouts() before the first launch (ordering.py and
   launch.py call it at import; a mismatch is an ImportError, never a crash). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

/* ---- dpctl's C API (dpctl_sycl_*_interface.h, dpctl 0.22) ---------------------------------- */

typedef void *QueueRef;
typedef void *KernelRef;
typedef void *EventRef;

enum { /* DPCTLKernelArgType */
    ARG_INT8, ARG_UINT8, ARG_INT16, ARG_UINT16, ARG_INT32, ARG_UINT32, ARG_INT64, ARG_UINT64,
    ARG_FLOAT32, ARG_FLOAT64, ARG_VOID_PTR, ARG_LOCAL_ACCESSOR
};
typedef struct { /* MDLocalAccessor (dpctl_sycl_queue_interface.h) */
    size_t ndim;
    int dpctl_type_id;
    size_t dim0, dim1, dim2;
} LocalAccessorArg;
enum { STATUS_COMPLETE = 3 }; /* DPCTLSyclEventStatusType */

static EventRef (*SubmitRange)(KernelRef, QueueRef, void **, const int *, size_t,
                               const size_t *, size_t, const EventRef *, size_t);
static EventRef (*SubmitNDRange)(KernelRef, QueueRef, void **, const int *, size_t,
                                 const size_t *, const size_t *, size_t, const EventRef *, size_t);
static void (*EventWait)(EventRef);
static void (*EventDelete)(EventRef);
static EventRef (*EventCopy)(EventRef);
static int (*EventStatus)(EventRef);
/* From dpctl's Cython capsules. */
static PyObject *(*SyclEvent_Make)(EventRef);
static EventRef (*SyclEvent_GetEventRef)(PyObject *);

/* ---- object layouts read directly (checked by check_layouts) ------------------------------ */

typedef struct { /* dpnp.tensor.usm_ndarray (dpnp 0.20, _usmarray.h) */
    PyObject_HEAD
    void *vtab;
    char *data;            /* element 0, offset already applied */
    int nd;
    Py_ssize_t *shape;
    Py_ssize_t *strides;   /* in elements; NULL when C-contiguous */
    int typenum;
    int flags;
    PyObject *base;        /* the dpctl.memory object of the allocation */
    PyObject *array_namespace;
    PyObject *weakreflist;
} UsmArray;

typedef struct { /* dpctl.memory._Memory (dpctl 0.22, memory/_memory.h) */
    PyObject_HEAD
    void *vtab;
    void *pointer;
    void *opaque;
    Py_ssize_t nbytes;
    PyObject *queue;       /* dpctl.SyclQueue */
    PyObject *refobj;
} UsmMemory;

static PyTypeObject *usm_ndarray_type, *dpnp_ndarray_type, *sycl_event_type;
static PyTypeObject *local_accessor_type; /* dk.LocalAccessor */
static Py_ssize_t dpnp_array_offset;  /* where a dpnp.ndarray keeps its usm_ndarray (a slot) */
static PyTypeObject *memory_types[3]; /* device, shared, host: usm_type by exact type */
static PyObject *str_array_obj, *str_bind, *str_new_launcher, *str_add_to_submitted, *str_get_submitted;
static PyObject *str_nbytes, *str_shape, *str_kind;
static PyObject *completed_event;     /* a callable returning a completed SyclEvent */
static PyObject *submit_error;        /* the exception class for a refused submission */
static PyObject *range_error;         /* dk.InvalidRangeError */
static int itemsize_of_typenum[32];   /* NumPy typenum -> bytes, 0 when unsupported */
static int ready;                     /* init() ran */

/* ---- OpenCL: launching on the OpenCL queue under a SYCL queue ----------------------------
   On the OpenCL backend a launch is enqueued straight on the cl_command_queue of its SYCL
   queue, with a cl_kernel of its Binding's own whose arguments stay set from one launch to the
   next. SYCL's submission (a handler, an event_impl, every argument set again, a work-group
   query) is most of what a launch costs (docs/launcher.md). queue.wait() still waits for these
   launches (SYCL finishes its OpenCL queue), and a launch's cl_event becomes a sycl::event only
   where Python or SYCL needs one (make_event). Everything here is resolved at init from
   libOpenCL and libsycl; if anything is missing, every launch goes through dpctl's C API. */

typedef int32_t cl_int;
typedef void *cl_handle; /* cl_command_queue, cl_kernel, cl_program, cl_event, ... */
enum {
    CL_COMPLETE = 0,
    CL_DEVICE_PLATFORM = 0x1031,
    CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT = 0x1065,
    CL_QUEUE_DEVICE = 0x1091,
    CL_EVENT_COMMAND_EXECUTION_STATUS = 0x11D3,
};
enum { SYCL_BACKEND_OPENCL = 1 }; /* sycl::backend::opencl */
#define SYCL_EVENT_BYTES 16       /* sizeof(sycl::event): one std::shared_ptr */

static struct {
    cl_int (*enqueue)(cl_handle queue, cl_handle kernel, uint32_t dims, const size_t *offset,
                      const size_t *global, const size_t *local, uint32_t nwait,
                      const cl_handle *wait, cl_handle *event);
    cl_int (*set_arg)(cl_handle kernel, uint32_t index, size_t size, const void *value);
    cl_int (*event_info)(cl_handle, uint32_t, size_t, void *, size_t *);
    cl_int (*queue_info)(cl_handle, uint32_t, size_t, void *, size_t *);
    cl_int (*device_info)(cl_handle, uint32_t, size_t, void *, size_t *);
    cl_int (*wait)(uint32_t count, const cl_handle *events);
    cl_int (*retain_event)(cl_handle);
    cl_int (*release_event)(cl_handle);
    cl_handle (*clone_kernel)(cl_handle kernel, cl_int *error);
    cl_int (*release_kernel)(cl_handle);
    cl_int (*release_queue)(cl_handle);
    void *(*extension)(cl_handle platform, const char *name);
    /* libsycl, C++ ABI of intel-sycl-rt 2026.1 (a returned sycl::event goes by hidden pointer) */
    uint64_t (*queue_native)(QueueRef, int32_t *backend); /* queue::getNative(int&): retained */
    cl_handle (*kernel_native)(KernelRef);               /* kernel::getNative(): retained */
    void *(*make_event)(void *result, uint64_t handle, const void *context, int backend);
    void *(*new_bytes)(size_t);                           /* operator new */
} cl;
static int cl_ready; /* everything above resolved */

/* ---- keep-alive ring: (event, arguments) until the event completes ------------------------
   A launch is known by its position in the ring (what an event is in compiled code); entries
   leave from the front, and only once complete, so a position no longer in the ring is a
   launch that has completed. */

#define RING_SIZE 4096 /* a power of two */
#define RING_MASK (RING_SIZE - 1)
/* At most this many launches in flight: a launch past it waits for the oldest (as CUDA's
   launch queue does). Each pending launch holds ~3.5 KiB of SYCL runtime state, so this bounds
   what launches faster than the device drains them can take (~4.5 MiB), and leaves room for a
   backlog of 1 000. */
#define MAX_IN_FLIGHT 1280
/* The ring position of a launch that is known to be complete. */
#define COMPLETED INT64_MAX

typedef struct QueueOrder QueueOrder;
/* `order` is set (a strong reference) for a launch enqueued on OpenCL: `event` is then its
   cl_event, and the order's SYCL context makes a sycl::event of it. Otherwise `event` is a
   dpctl event reference (a sycl::event). An entry whose event was let go early
   (ring_supersede) has event NULL, and the later launch `successor` answers for it. */
static struct {
    void *event;
    PyObject *args;
    QueueOrder *order;
    int64_t successor;
} ring[RING_SIZE];
static size_t ring_head, ring_tail; /* entries live in [head, tail) */

static int ring_holds(int64_t position)
{
    return position >= 0 && (size_t)position >= ring_head && (size_t)position < ring_tail;
}

/* The ring position whose event answers for the launch at `position` (in the ring): its own,
   or for a superseded launch the newest launch after it on its queue, which runs after it;
   -1 once that one has left the ring (complete). The chain it walks is shortened for the
   next call. */
static int64_t ring_standing(int64_t position)
{
    int64_t p = position;
    while (ring[(size_t)p & RING_MASK].event == NULL) {
        p = ring[(size_t)p & RING_MASK].successor;
        if (!ring_holds(p)) return -1;
    }
    for (int64_t q = position; q != p;) {
        int64_t next = ring[(size_t)q & RING_MASK].successor;
        ring[(size_t)q & RING_MASK].successor = p;
        q = next;
    }
    return p;
}

static int entry_complete(int64_t position)
{
    position = ring_standing(position);
    if (position < 0) return 1;
    size_t i = (size_t)position & RING_MASK;
    if (ring[i].order == NULL) return EventStatus(ring[i].event) == STATUS_COMPLETE;
    cl_int status = 1;
    if (cl.event_info(ring[i].event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                      NULL) != 0)
        return 0;
    return status <= CL_COMPLETE; /* negative: the command ended abnormally */
}

/* Lets go of ring entry `i`'s event (a cl_event or a dpctl event reference), if it has one. */
static void ring_release_event(size_t i)
{
    if (ring[i].event == NULL) return;
    if (ring[i].order != NULL) cl.release_event(ring[i].event);
    else EventDelete(ring[i].event);
    ring[i].event = NULL;
}

static void ring_pop(void)
{
    size_t i = ring_head++ & RING_MASK;
    PyObject *args = ring[i].args;
    QueueOrder *order = ring[i].order;
    ring_release_event(i);
    ring[i].args = NULL;
    ring[i].order = NULL;
    Py_DECREF(args);
    Py_XDECREF((PyObject *)order);
}

/* Releases completed launches from the front, at most `limit`. A pop may run finalizers that
   launch and release: each turn asks about the front as it is then. */
static void ring_release_completed(int limit)
{
    while (limit-- > 0 && ring_head != ring_tail) {
        if (!entry_complete((int64_t)ring_head)) break;
        ring_pop();
    }
}

/* Waits for the launch at a ring position without the GIL, on a reference of its own:
   another thread may pop the entry (and release its event) meanwhile. */
static void wait_without_gil(int64_t position)
{
    position = ring_standing(position);
    if (position < 0) return;
    size_t i = (size_t)position & RING_MASK;
    void *event = ring[i].event;
    if (ring[i].order != NULL) {
        cl.retain_event(event);
        Py_BEGIN_ALLOW_THREADS
        cl.wait(1, &event);
        Py_END_ALLOW_THREADS
        cl.release_event(event);
        return;
    }
    EventRef copy = EventCopy(event);
    if (copy == NULL) { /* out of memory: wait holding the GIL */
        EventWait(event);
        return;
    }
    Py_BEGIN_ALLOW_THREADS
    EventWait(copy);
    Py_END_ALLOW_THREADS
    EventDelete(copy);
}

static void ring_wait_oldest(void)
{
    wait_without_gil((int64_t)ring_head);
    ring_release_completed(RING_SIZE);
}

/* Makes room for one more launch: a launch past MAX_IN_FLIGHT waits for the oldest (it
   releases the GIL, so it comes before a launch reads its queue's ordering state). */
static void ring_make_room(void)
{
    while (ring_tail - ring_head >= MAX_IN_FLIGHT) ring_wait_oldest();
}

/* Takes ownership of `event` (after ring_make_room); returns its ring position. `order` is
   given for a cl_event, NULL for a dpctl event reference. */
static int64_t ring_push(void *event, PyObject *args, QueueOrder *order)
{
    size_t position = ring_tail++;
    ring[position & RING_MASK].event = event;
    ring[position & RING_MASK].args = Py_NewRef(args);
    ring[position & RING_MASK].order = order;
    ring[position & RING_MASK].successor = -1;
    Py_XINCREF((PyObject *)order);
    return (int64_t)position;
}

/* ---- QueueOrder: ordering with dpnp (see ordering.py for the protocol) -------------------- */

struct QueueOrder {
    PyObject_HEAD
    PyObject *keeper;      /* dpctl's C++ order keeper (_SequentialOrderManager._state) */
    PyObject *context;     /* the queue's dpctl.SyclContext: sycl::events of its cl_events */
    void *context_ref;
    int64_t last;          /* ring position of our newest launch on this queue, or -1 */
    int published;         /* the newest launch has been handed to the keeper */
    int dirty;             /* someone else registered work with the keeper since our launch */
    int profiling;         /* the queue records profiling information */
};

/* Lets go of the event of `last`, our previous launch on a queue, once `position`, the next
   launch there, runs after it: `position` answers for it from then on (whether it completed,
   what waiting for it waits for). The OpenCL runtime frees a command where its event's last
   reference goes: let go while the command is pending, on the runtime's thread when it
   completes, instead of in the launching thread. A loop in compiled code launching on an
   idle device took 6.0-6.9 us a launch so, against 8.1-9.5 us (pyopencl's loop: 2.8-3.1 us
   letting go, 5.0-5.5 us keeping the events until complete). Every 8th position keeps its
   event, so that completions are seen every few launches. Not on a profiling queue: there
   the dpctl.SyclEvent a compiled launch gets when it returns to Python must time that
   launch. */
static void ring_supersede(QueueOrder *order, int64_t last, int64_t position)
{
    if ((last & 7) == 0 || order->profiling) return;
    ring_release_event((size_t)last & RING_MASK);
    ring[(size_t)last & RING_MASK].successor = position;
}

/* A new dpctl event reference (delete it) for the cl_event of ring entry `i`. */
static EventRef sycl_event_of_cl(size_t i)
{
    void *event = cl.new_bytes(SYCL_EVENT_BYTES);
    cl.make_event(event, (uint64_t)(uintptr_t)ring[i].event, ring[i].order->context_ref,
                  SYCL_BACKEND_OPENCL); /* retains the cl_event */
    return event;
}

/* ---- events: dpctl.SyclEvents whose wait() Ctrl-C can interrupt --------------------------- */

/* A dpctl.SyclEvent subclass of the same layout: every event a launch returns is one. dpctl's
   wait() blocks in the runtime with the GIL released, so the interpreter cannot act on Ctrl-C
   until the kernel ends; this wait() hands the blocking wait to another thread and waits for
   it in Python (dispatcher/events.py), where KeyboardInterrupt arrives at once. */
static PyTypeObject EventType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "dpex_kernels.SyclEvent",
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A dpctl.SyclEvent whose wait() Ctrl-C interrupts (docs/dispatch.md).",
};
static PyObject *interruptible_wait; /* events.wait, set by init */

static PyObject *Event_wait(PyObject *self, PyObject *unused)
{
    return PyObject_CallOneArg(interruptible_wait, self);
}

static PyMethodDef Event_methods[] = {
    {"wait", Event_wait, METH_NOARGS,
     "Wait for the event's command to complete; Ctrl-C interrupts the wait."},
    {NULL}};

/* SyclEvent_Make, as an EventType: the same object of the same layout, another type. */
static PyObject *event_object(EventRef ref)
{
    PyObject *event = SyclEvent_Make(ref);
    if (event != NULL && Py_IS_TYPE(event, sycl_event_type)) Py_SET_TYPE(event, &EventType);
    return event;
}

/* A new dpctl.SyclEvent for the launch at ring position `position` (in the ring). */
static PyObject *ring_event_object(int64_t position)
{
    position = ring_standing(position);
    if (position < 0) return PyObject_CallNoArgs(completed_event);
    size_t i = (size_t)position & RING_MASK;
    if (ring[i].order == NULL) return event_object(ring[i].event);
    EventRef made = sycl_event_of_cl(i);
    PyObject *event = event_object(made);
    EventDelete(made);
    return event;
}

static int order_publish(QueueOrder *o)
{
    if (o->published || !ring_holds(o->last)) return 0; /* none, or complete */
    PyObject *event = ring_event_object(o->last);
    if (event == NULL) return -1;
    PyObject *r = PyObject_CallMethodOneArg(o->keeper, str_add_to_submitted, event);
    Py_DECREF(event);
    if (r == NULL) return -1;
    Py_DECREF(r);
    o->published = 1;
    return 0;
}

static PyObject *QueueOrder_publish(QueueOrder *o, PyObject *unused)
{
    if (order_publish(o) < 0) return NULL;
    Py_RETURN_NONE;
}

static int QueueOrder_init(QueueOrder *o, PyObject *args, PyObject *kw)
{
    PyObject *keeper, *context;
    unsigned long long context_ref;
    int profiling;
    if (!PyArg_ParseTuple(args, "OOKp", &keeper, &context, &context_ref, &profiling)) return -1;
    o->profiling = profiling;
    Py_XSETREF(o->keeper, Py_NewRef(keeper));
    Py_XSETREF(o->context, Py_NewRef(context));
    o->context_ref = (void *)(uintptr_t)context_ref;
    o->last = -1;
    return 0;
}

static int QueueOrder_traverse(QueueOrder *o, visitproc visit, void *arg)
{
    Py_VISIT(o->keeper);
    Py_VISIT(o->context);
    return 0;
}

static int QueueOrder_clear(QueueOrder *o)
{
    Py_CLEAR(o->keeper);
    Py_CLEAR(o->context);
    return 0;
}

static void QueueOrder_dealloc(QueueOrder *o)
{
    PyObject_GC_UnTrack(o);
    QueueOrder_clear(o);
    Py_TYPE(o)->tp_free((PyObject *)o);
}

static PyMethodDef QueueOrder_methods[] = {
    {"publish", (PyCFunction)QueueOrder_publish, METH_NOARGS,
     "Hand our newest launch to dpctl's order keeper, before someone else reads it."},
    {NULL}};

static PyMemberDef QueueOrder_members[] = {
    {"dirty", T_INT, offsetof(QueueOrder, dirty), 0, "work was registered by someone else"},
    {"published", T_INT, offsetof(QueueOrder, published), READONLY, "last launch published"},
    {NULL}};

static PyTypeObject QueueOrderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "dpex_kernels.dispatcher._launcher.QueueOrder",
    .tp_basicsize = sizeof(QueueOrder),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Per-queue ordering state shared by every launch on one SYCL queue.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)QueueOrder_init,
    .tp_traverse = (traverseproc)QueueOrder_traverse,
    .tp_clear = (inquiry)QueueOrder_clear,
    .tp_dealloc = (destructor)QueueOrder_dealloc,
    .tp_methods = QueueOrder_methods,
    .tp_members = QueueOrder_members,
};

static PyObject *drain(PyObject *m, PyObject *unused)
{
    /* Waits for every launch still running (at exit, and for tests). */
    while (ready && ring_head != ring_tail) ring_wait_oldest();
    Py_RETURN_NONE;
}

static PyObject *release_completed(PyObject *m, PyObject *unused)
{
    /* Lets the arguments of completed launches go now, not at the next launch: their memory
       may then be reused (offloading/reused_memory.py). */
    if (ready) ring_release_completed(RING_SIZE);
    Py_RETURN_NONE;
}

static PyObject *in_flight(PyObject *m, PyObject *unused)
{
    return PyLong_FromSize_t(ring_tail - ring_head);
}

/* ---- Binding: what a launch needs for one tuple of argument types, decided in Python ------ */

enum { /* slot fields: the order of types/params.py FIELDS */
    F_DATA, F_SHAPE, F_STRIDE, F_VALUE, F_REAL, F_IMAG, F_LOCAL, F_LOCAL_SHAPE
};
enum { /* how a scalar slot is converted; K_LOCAL: work-group memory of a LocalAccessor */
    K_BOOL, K_INT8, K_UINT8, K_INT16, K_UINT16, K_INT32, K_UINT32, K_INT64, K_UINT64,
    K_FLOAT32, K_FLOAT64, K_POINTER, K_LOCAL
};
static const char *kind_names[] = {"bool",   "int8",   "uint8",   "int16",   "uint16",
                                   "int32",  "uint32", "int64",   "uint64",  "float32",
                                   "float64", "pointer", "local"};
static const int kind_argtype[] = {ARG_UINT8, ARG_INT8, ARG_UINT8, ARG_INT16, ARG_UINT16,
                                   ARG_INT32, ARG_UINT32, ARG_INT64, ARG_UINT64, ARG_FLOAT32,
                                   ARG_FLOAT64, ARG_VOID_PTR, ARG_LOCAL_ACCESSOR};
static const long long kind_min[] = {0, -128, 0, -32768, 0, INT32_MIN, 0, INT64_MIN, 0};
static const long long kind_max[] = {1, 127, 255, 32767, 65535, INT32_MAX, UINT32_MAX,
                                     INT64_MAX, 0 /* uint64: checked apart */};

typedef struct {
    unsigned char field, kind;
    unsigned short param, axis;
} Slot;

typedef union { int64_t i; uint64_t u; double d; float f; void *p; } Value;

typedef struct {
    PyObject_HEAD
    Py_ssize_t nslots;
    Slot *slots;
    PyObject *sycl_kernel;  /* dpctl.program.SyclKernel, kept alive */
    KernelRef kernel_ref;
    PyObject *queue;        /* dpctl.SyclQueue the launch runs on */
    QueueRef queue_ref;
    QueueOrder *order;
    PyObject *flag;         /* debug mode: the USM shared error record the kernel fills */
    int32_t *flag_ptr;      /* its int32 status code comes first; 0: no error */
    Py_ssize_t flag_size;   /* its bytes, cleared before each launch */
    PyObject *on_error;     /* debug mode: called when the status is set; raises */
    /* Launches on OpenCL (cl_kernel NULL: through dpctl's C API). The cl_kernel is this
       Binding's own, so the arguments it holds are the ones its last launch set. */
    cl_handle cl_queue, cl_kernel;
    cl_int (*set_pointer)(cl_handle kernel, uint32_t index, const void *pointer);
    Value *cl_values;       /* the cl_kernel's arguments (nslots, then the error record) */
    int cl_args_set;        /* cl_values holds them all */
    int64_t cl_last;        /* ring position of its newest launch on OpenCL, or -1 */
    size_t round_to;        /* a ragged Range's work-group size along its fastest dimension;
                               0: the runtime picks every Range's (launch.py) */
    size_t local_limit;     /* the bytes LocalAccessor arguments may take together */
} Binding;

static const unsigned char kind_bytes[] = {1, 1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 8, 8};

static void binding_close_cl(Binding *b)
{
    if (b->cl_kernel != NULL) cl.release_kernel(b->cl_kernel);
    if (b->cl_queue != NULL) cl.release_queue(b->cl_queue);
    PyMem_Free(b->cl_values);
    b->cl_kernel = b->cl_queue = NULL;
    b->cl_values = NULL;
    b->cl_args_set = 0;
    b->cl_last = -1;
}

/* The SYCL queue's OpenCL queue and a copy of the SYCL kernel's cl_kernel (clCloneKernel: the
   runtime refuses its program's handle once only kernels hold it); where either cannot be
   had, the Binding launches through dpctl's C API. */
static void binding_open_cl(Binding *b)
{
    int32_t backend = 0;
    cl_handle queue = (cl_handle)(uintptr_t)cl.queue_native(b->queue_ref, &backend);
    cl_handle sycl_kernel = cl.kernel_native(b->kernel_ref);
    cl_handle device = NULL, platform = NULL, kernel = NULL;
    void *set_pointer = NULL;
    if (queue != NULL && sycl_kernel != NULL &&
        cl.queue_info(queue, CL_QUEUE_DEVICE, sizeof device, &device, NULL) == 0 &&
        cl.device_info(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL) == 0 &&
        (set_pointer = cl.extension(platform, "clSetKernelArgMemPointerINTEL")) != NULL) {
        cl_int error = 0;
        kernel = cl.clone_kernel(sycl_kernel, &error);
        if (error != 0) kernel = NULL;
    }
    if (sycl_kernel != NULL) cl.release_kernel(sycl_kernel);
    b->cl_values = kernel ? PyMem_Calloc((size_t)b->nslots + 1, sizeof(Value)) : NULL;
    if (b->cl_values == NULL) {
        if (kernel != NULL) cl.release_kernel(kernel);
        if (queue != NULL) cl.release_queue(queue);
        return;
    }
    b->cl_queue = queue;
    b->cl_kernel = kernel;
    b->set_pointer = (cl_int (*)(cl_handle, uint32_t, const void *))set_pointer;
}

static int kind_of_name(PyObject *name)
{
    const char *s = PyUnicode_AsUTF8(name);
    if (s == NULL) return -1;
    for (int k = 0; k <= K_LOCAL; k++)
        if (strcmp(s, kind_names[k]) == 0) return k;
    PyErr_Format(PyExc_ValueError, "internal error: no kernel-argument kind '%s'", s);
    return -1;
}

static int Binding_init(Binding *b, PyObject *args, PyObject *kw)
{
    static char *names[] = {"slots", "sycl_kernel", "kernel_ref", "queue", "queue_ref",
                            "order", "flag", "flag_ptr", "flag_size", "on_error", "opencl",
                            "round_to", "local_limit", NULL};
    PyObject *slots, *sycl_kernel, *queue, *order, *flag = Py_None, *on_error = Py_None;
    unsigned long long kernel_ref, queue_ref, flag_ptr = 0;
    Py_ssize_t flag_size = 0, round_to = 0, local_limit = 0;
    int opencl = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOKOKO!|OKnOpnn", names, &slots, &sycl_kernel,
                                     &kernel_ref, &queue, &queue_ref, &QueueOrderType, &order,
                                     &flag, &flag_ptr, &flag_size, &on_error, &opencl,
                                     &round_to, &local_limit))
        return -1;
    if (round_to < 0 || local_limit < 0) {
        PyErr_SetString(PyExc_ValueError, "internal error: a negative work-group size");
        return -1;
    }
    if (flag_ptr != 0 && flag_size < (Py_ssize_t)sizeof(int32_t)) {
        PyErr_SetString(PyExc_ValueError, "internal error: an error record holds an int32 status");
        return -1;
    }
    PyObject *seq = PySequence_Fast(slots, "slots must be a sequence");
    if (seq == NULL) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyMem_Free(b->slots);
    b->slots = PyMem_Calloc(n ? n : 1, sizeof(Slot));
    if (b->slots == NULL) { Py_DECREF(seq); PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < n; i++) {
        int field, param, axis;
        PyObject *kind;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "iiiU", &field, &param, &axis,
                              &kind)) { Py_DECREF(seq); return -1; }
        int k = kind_of_name(kind);
        if (k < 0) { Py_DECREF(seq); return -1; }
        b->slots[i] = (Slot){(unsigned char)field, (unsigned char)k, (unsigned short)param,
                             (unsigned short)axis};
    }
    Py_DECREF(seq);
    b->nslots = n;
    b->kernel_ref = (KernelRef)(uintptr_t)kernel_ref;
    b->queue_ref = (QueueRef)(uintptr_t)queue_ref;
    b->flag_ptr = (int32_t *)(uintptr_t)flag_ptr;
    b->flag_size = flag_size;
    b->round_to = (size_t)round_to;
    b->local_limit = (size_t)local_limit;
    Py_XSETREF(b->sycl_kernel, Py_NewRef(sycl_kernel));
    Py_XSETREF(b->queue, Py_NewRef(queue));
    Py_XSETREF(b->order, (QueueOrder *)Py_NewRef(order));
    Py_XSETREF(b->flag, Py_NewRef(flag));
    Py_XSETREF(b->on_error, Py_NewRef(on_error));
    binding_close_cl(b);
    if (opencl && cl_ready) binding_open_cl(b);
    return 0;
}

static int Binding_traverse(Binding *b, visitproc visit, void *arg)
{
    Py_VISIT(b->sycl_kernel);
    Py_VISIT(b->queue);
    Py_VISIT(b->order);
    Py_VISIT(b->flag);
    Py_VISIT(b->on_error);
    return 0;
}

static int Binding_clear(Binding *b)
{
    Py_CLEAR(b->sycl_kernel);
    Py_CLEAR(b->queue);
    Py_CLEAR(b->order);
    Py_CLEAR(b->flag);
    Py_CLEAR(b->on_error);
    return 0;
}

static void Binding_dealloc(Binding *b)
{
    PyObject_GC_UnTrack(b);
    Binding_clear(b);
    binding_close_cl(b);
    PyMem_Free(b->slots);
    Py_TYPE(b)->tp_free((PyObject *)b);
}

static PyObject *Binding_get_opencl(Binding *b, void *unused)
{
    return PyBool_FromLong(b->cl_kernel != NULL);
}

static PyGetSetDef Binding_getset[] = {
    {"opencl", (getter)Binding_get_opencl, NULL, "whether its launches go straight to OpenCL"},
    {NULL}};

static PyTypeObject BindingType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "dpex_kernels.dispatcher._launcher.Binding",
    .tp_basicsize = sizeof(Binding),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "What a launch needs for one tuple of argument types: slots, kernel, queue.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Binding_init,
    .tp_traverse = (traverseproc)Binding_traverse,
    .tp_clear = (inquiry)Binding_clear,
    .tp_dealloc = (destructor)Binding_dealloc,
    .tp_getset = Binding_getset,
};

/* ---- reading arguments ---------------------------------------------------------------------- */

/* What decides the Binding for one argument: equal descriptors, same Binding. */
typedef struct {
    void *type;    /* a scalar's Python type, or the memory type (usm_type) of an array */
    void *queue;   /* arrays: the SyclQueue object */
    int typenum, nd, flags; /* flags: C- and F-contiguity, writability (usm_ndarray bits) */
} Descriptor;

typedef struct {
    UsmArray *array; /* NULL for scalars */
} Argument;

/* 1: read; 0: not an array this file knows (a scalar, or for Python); -1: error. */
static int read_array(PyObject *value, Argument *out, Descriptor *d)
{
    PyObject *x = value;
    if (Py_TYPE(x) == dpnp_ndarray_type) {
        /* dpnp.ndarray keeps its usm_ndarray in the slot _array_obj; the caller keeps both alive. */
        x = *(PyObject **)((char *)value + dpnp_array_offset);
        if (x == NULL) {
            PyErr_SetString(PyExc_TypeError, "a dpnp.ndarray without its usm_ndarray");
            return -1;
        }
    }
    if (Py_TYPE(x) != usm_ndarray_type) return 0;
    UsmArray *a = (UsmArray *)x;
    PyObject *memory = a->base;
    out->array = a;
    d->type = memory ? (void *)Py_TYPE(memory) : NULL;
    d->queue = memory ? (void *)((UsmMemory *)memory)->queue : NULL;
    d->typenum = a->typenum;
    d->nd = a->nd;
    d->flags = a->flags & 7;
    return 1;
}

static int scalar_fits(int kind, PyObject *value)
{
    /* Only a Python int's value decides whether it fits (the scalar rules). */
    if (Py_TYPE(value) != &PyLong_Type || kind > K_UINT64 || kind == K_BOOL) return 1;
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (kind == K_UINT64) {
        if (overflow < 0 || (overflow == 0 && v < 0)) return 0;
        if (overflow > 0) {
            unsigned long long u = PyLong_AsUnsignedLongLong(value);
            if (u == (unsigned long long)-1 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
        }
        return 1;
    }
    return overflow == 0 && v >= kind_min[kind] && v <= kind_max[kind];
}

/* Elements between neighbours along `axis`: usm_ndarray leaves strides NULL for contiguous
   arrays, C or F as its flags say. */
static Py_ssize_t element_stride(const UsmArray *a, int axis)
{
    if (a->strides != NULL) return a->strides[axis];
    Py_ssize_t step = 1;
    if ((a->flags & 3) == 2) /* F-contiguous only: the product of the earlier extents */
        for (int i = 0; i < axis; i++) step *= a->shape[i];
    else
        for (int i = a->nd - 1; i > axis; i--) step *= a->shape[i];
    return step;
}

static int64_t stride_of(const UsmArray *a, int axis)
{
    return (int64_t)element_stride(a, axis) * itemsize_of_typenum[a->typenum & 31];
}

/* A LocalAccessor's ndim and element type, which its binding depends on. */
static int read_accessor_kind(PyObject *accessor, Descriptor *d)
{
    PyObject *kind = PyObject_GetAttr(accessor, str_kind);
    if (kind == NULL) return -1;
    d->typenum = (int)PyLong_AsLong(kind);
    Py_DECREF(kind);
    return PyErr_Occurred() ? -1 : 0;
}

/* A LocalAccessor's bytes (F_LOCAL) or one of its extents (F_LOCAL_SHAPE). */
static int read_local(PyObject *accessor, int field, int axis, Value *out)
{
    PyObject *found = PyObject_GetAttr(accessor, field == F_LOCAL ? str_nbytes : str_shape);
    if (found == NULL) return -1;
    PyObject *number = field == F_LOCAL ? found : PySequence_GetItem(found, axis);
    long long value = number ? PyLong_AsLongLong(number) : -1;
    if (number != found) Py_XDECREF(number);
    Py_DECREF(found);
    if (value < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a negative LocalAccessor size");
        return -1;
    }
    out->i = value;
    return 0;
}

static int pack_scalar(int kind, int part, PyObject *value, Value *out)
{
    if (kind == K_FLOAT32 || kind == K_FLOAT64) {
        double d;
        if (part == F_VALUE) {
            d = PyFloat_AsDouble(value);
        } else {
            Py_complex c = PyComplex_AsCComplex(value);
            d = part == F_REAL ? c.real : c.imag;
        }
        if (d == -1.0 && PyErr_Occurred()) return -1;
        if (kind == K_FLOAT32) out->f = (float)d; else out->d = d;
        return 0;
    }
    if (kind == K_BOOL) {
        int t = PyObject_IsTrue(value);
        if (t < 0) return -1;
        out->i = t;
        return 0;
    }
    PyObject *index = PyNumber_Index(value);
    if (index == NULL) return -1;
    if (kind == K_UINT64) out->u = PyLong_AsUnsignedLongLong(index);
    else out->i = PyLong_AsLongLong(index);
    Py_DECREF(index);
    if (PyErr_Occurred()) return -1;
    /* Narrow in place: little-endian targets read the low bytes. */
    return 0;
}

/* ---- Launcher: kernel[range]; calling it launches ------------------------------------------- */

#define CACHE_SIZE 4

typedef struct {
    PyObject_HEAD
    PyObject *kernel;       /* the KernelCore it launches */
    PyObject *name;         /* the kernel's name, for messages */
    PyObject *range;        /* the dk.Range or dk.NdRange it launches */
    Py_ssize_t nparams;
    int dims;               /* the range's dimension count */
    size_t global[3], local[3];
    int ndim;               /* 0: an empty range (nothing runs) */
    int nd_range;           /* a local size was given */
    int ragged;             /* a Range the runtime would cut into tiny work-groups (ranges.py) */
    int next;               /* cache slot to replace next */
    Binding *bindings[CACHE_SIZE];
    Descriptor *descriptors[CACHE_SIZE];
} Launcher;

static int Launcher_init(Launcher *l, PyObject *args, PyObject *kw)
{
    PyObject *kernel, *name, *range, *global, *local;
    Py_ssize_t nparams;
    int ragged;
    if (!PyArg_ParseTuple(args, "OUnOO!Op", &kernel, &name, &nparams, &range, &PyTuple_Type,
                          &global, &local, &ragged))
        return -1;
    Py_ssize_t ndim = PyTuple_GET_SIZE(global);
    if (ndim < 1 || ndim > 3 || (local != Py_None && (!PyTuple_Check(local) ||
                                                      PyTuple_GET_SIZE(local) != ndim))) {
        PyErr_SetString(PyExc_ValueError, "internal error: malformed launch range");
        return -1;
    }
    int empty = 0;
    for (Py_ssize_t i = 0; i < ndim; i++) {
        l->global[i] = PyLong_AsSize_t(PyTuple_GET_ITEM(global, i));
        l->local[i] = local == Py_None ? 0 : PyLong_AsSize_t(PyTuple_GET_ITEM(local, i));
        empty |= l->global[i] == 0;
    }
    if (PyErr_Occurred()) return -1;
    Py_XSETREF(l->kernel, Py_NewRef(kernel));
    Py_XSETREF(l->name, Py_NewRef(name));
    Py_XSETREF(l->range, Py_NewRef(range));
    l->nparams = nparams;
    l->dims = (int)ndim;
    l->ndim = empty ? 0 : (int)ndim;
    l->nd_range = local != Py_None;
    l->ragged = ragged && !l->nd_range;
    return 0;
}

static int Launcher_traverse(Launcher *l, visitproc visit, void *arg)
{
    Py_VISIT(l->kernel);
    for (int i = 0; i < CACHE_SIZE; i++) Py_VISIT(l->bindings[i]);
    return 0;
}

static int Launcher_clear(Launcher *l)
{
    Py_CLEAR(l->kernel);
    for (int i = 0; i < CACHE_SIZE; i++) Py_CLEAR(l->bindings[i]);
    return 0;
}

static void Launcher_dealloc(Launcher *l)
{
    PyObject_GC_UnTrack(l);
    Launcher_clear(l);
    Py_CLEAR(l->name);
    Py_CLEAR(l->range);
    for (int i = 0; i < CACHE_SIZE; i++) PyMem_Free(l->descriptors[i]);
    Py_TYPE(l)->tp_free((PyObject *)l);
}

static PyObject *launch_error(Launcher *l, PyObject *cls, const char *what)
{
    PyErr_Format(cls, "kernel '%U': %s", l->name, what);
    return NULL;
}

/* Event refs a launch depends on: depends_on, dpnp's pending work, our previous launch. */
typedef struct {
    EventRef refs[64];
    EventRef *all;
    size_t count, capacity;
    PyObject *keep; /* a list from the keeper, alive until the submit */
    EventRef made;  /* a sycl::event made of our previous launch's cl_event, deleted after */
} Dependencies;

static int deps_add_ref(Dependencies *d, EventRef ref)
{
    if (d->count == d->capacity) {
        size_t capacity = d->capacity * 2;
        EventRef *grown = PyMem_Malloc(capacity * sizeof(EventRef));
        if (grown == NULL) { PyErr_NoMemory(); return -1; }
        memcpy(grown, d->all, d->count * sizeof(EventRef));
        if (d->all != d->refs) PyMem_Free(d->all);
        d->all = grown;
        d->capacity = capacity;
    }
    d->all[d->count++] = ref;
    return 0;
}

static int deps_add(Dependencies *d, PyObject *event)
{
    if (!PyObject_TypeCheck(event, sycl_event_type)) {
        PyErr_Format(PyExc_TypeError,
                     "depends_on must hold dpctl.SyclEvent objects; got %s",
                     Py_TYPE(event)->tp_name);
        return -1;
    }
    return deps_add_ref(d, SyclEvent_GetEventRef(event));
}

static int deps_add_sequence(Dependencies *d, PyObject *events)
{
    if (PyObject_TypeCheck(events, sycl_event_type)) return deps_add(d, events);
    if (!PyList_Check(events) && !PyTuple_Check(events)) {
        PyErr_Format(PyExc_TypeError,
                     "depends_on must be a dpctl.SyclEvent or a sequence of them; got %s",
                     Py_TYPE(events)->tp_name);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(events);
    for (Py_ssize_t i = 0; i < n; i++)
        if (deps_add(d, PySequence_Fast_GET_ITEM(events, i)) < 0) return -1;
    return 0;
}

static Binding *find_binding(Launcher *l, const Descriptor *desc)
{
    size_t bytes = (size_t)l->nparams * sizeof(Descriptor);
    for (int i = 0; i < CACHE_SIZE; i++)
        if (l->bindings[i] && memcmp(l->descriptors[i], desc, bytes) == 0) return l->bindings[i];
    return NULL;
}

static int remember_binding(Launcher *l, const Descriptor *desc, Binding *b)
{
    size_t bytes = (size_t)l->nparams * sizeof(Descriptor);
    int i = l->next;
    l->next = (i + 1) % CACHE_SIZE;
    if (l->descriptors[i] == NULL && (l->descriptors[i] = PyMem_Malloc(bytes ? bytes : 1)) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(l->descriptors[i], desc, bytes);
    Py_XSETREF(l->bindings[i], (Binding *)Py_NewRef(b));
    return 0;
}

static int64_t launch(Launcher *l, PyObject *args, PyObject *depends_on, PyObject **event);

/* The work-group size a launch asks for, in SYCL order: an NdRange's own; for a ragged Range
   on a device that takes a smaller last work-group, b->round_to along the fastest dimension
   (docs/launcher.md, "Ranges with no good divisor"); otherwise NULL, the runtime's choice. */
static const size_t *local_size_of(const Launcher *l, const Binding *b, size_t local[3])
{
    if (l->nd_range) return l->local;
    if (!l->ragged || b->round_to == 0) return NULL;
    for (int i = 0; i < l->ndim - 1; i++) local[i] = 1;
    local[l->ndim - 1] = b->round_to;
    return local;
}

/* Sets the Binding's cl_kernel arguments and enqueues it on OpenCL, after the cl_event
   `after` when there is one. Arguments the cl_kernel already holds are not set again, but a
   pointer only while the Binding's previous launch is in the ring: the runtime ties a USM
   pointer argument to its allocation when it is set, and once that launch's arrays are
   released a new array may reuse a freed allocation's address (a kernel then ran on the freed
   allocation's state and crashed). SYCL's dimension 0 is OpenCL's last (SYCL's last
   dimension varies fastest), so the range goes in reverse. */
static int launch_opencl(Launcher *l, Binding *b, const Value *values, Py_ssize_t nslots,
                         const size_t *local_size, cl_handle after, void **event)
{
    int pointers_held = ring_holds(b->cl_last);
    for (Py_ssize_t k = 0; k < nslots; k++) {
        int kind = k < b->nslots ? b->slots[k].kind : K_POINTER; /* then the error record */
        size_t size = kind_bytes[kind];
        if (b->cl_args_set && (kind != K_POINTER || pointers_held) &&
            memcmp(&b->cl_values[k], &values[k], size) == 0)
            continue;
        cl_int error = kind == K_POINTER ? b->set_pointer(b->cl_kernel, (uint32_t)k, values[k].p)
                       : kind == K_LOCAL ? cl.set_arg(b->cl_kernel, (uint32_t)k, values[k].u, NULL)
                                         : cl.set_arg(b->cl_kernel, (uint32_t)k, size, &values[k]);
        if (error != 0) {
            b->cl_args_set = 0;
            PyErr_Format(submit_error, "kernel '%U': the OpenCL runtime refused argument %zd "
                         "(error %d)", l->name, k, (int)error);
            return -1;
        }
        memcpy(&b->cl_values[k], &values[k], size);
    }
    b->cl_args_set = 1;
    size_t global[3], local[3];
    for (int i = 0; i < l->ndim; i++) {
        global[i] = l->global[l->ndim - 1 - i];
        local[i] = local_size ? local_size[l->ndim - 1 - i] : 0;
    }
    cl_int error = cl.enqueue(b->cl_queue, b->cl_kernel, (uint32_t)l->ndim, NULL, global,
                              local_size ? local : NULL, after ? 1 : 0, after ? &after : NULL,
                              (cl_handle *)event);
    if (error != 0) {
        b->cl_args_set = 0; /* its arrays are not kept: set them all next time */
        PyErr_Format(submit_error, "kernel '%U': the OpenCL runtime refused the launch "
                     "(error %d)", l->name, (int)error);
        return -1;
    }
    return 0;
}

static PyObject *Launcher_call(Launcher *l, PyObject *args, PyObject *kwargs)
{
    PyObject *depends_on = NULL;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs)) {
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        while (PyDict_Next(kwargs, &pos, &key, &value)) {
            if (PyUnicode_Check(key) && PyUnicode_CompareWithASCIIString(key, "depends_on") == 0) {
                depends_on = value;
            } else {
                PyErr_Format(PyExc_TypeError,
                             "kernel '%U' takes its arguments by position; the only keyword a "
                             "launch accepts is depends_on, got '%S'", l->name, key);
                return NULL;
            }
        }
        if (depends_on == Py_None) depends_on = NULL;
    }
    if (PyTuple_GET_SIZE(args) != l->nparams) {
        PyErr_Format(PyExc_TypeError, "%U() takes %zd positional argument(s) but %zd were given",
                     l->name, l->nparams, PyTuple_GET_SIZE(args));
        return NULL;
    }
    PyObject *event;
    return launch(l, args, depends_on, &event) < 0 ? NULL : event;
}

/* Submits one launch. Returns its ring position (COMPLETED for an empty range), or -1 with an
   exception set; `event`, when given, receives the launch's dpctl.SyclEvent (compiled callers
   pass NULL: their event is the ring position, and no Python object is made). */
static int64_t launch(Launcher *l, PyObject *args, PyObject *depends_on, PyObject **event)
{
    Py_ssize_t n = l->nparams;
    Argument argv[n > 0 ? n : 1];
    Descriptor desc[n > 0 ? n : 1];
    memset(desc, 0, sizeof(desc));
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *value = PyTuple_GET_ITEM(args, i);
        int r = read_array(value, &argv[i], &desc[i]);
        if (r < 0) return -1;
        if (r == 0) { /* a scalar, or something only Python can read or refuse */
            argv[i].array = NULL;
            desc[i].type = Py_TYPE(value);
            if (Py_TYPE(value) == local_accessor_type && read_accessor_kind(value, &desc[i]) < 0)
                return -1;
        }
    }
    /* Only combinations Python accepted (queues included: compute follows data) are cached. */
    Binding *b = find_binding(l, desc);
    if (b != NULL) {
        for (Py_ssize_t k = 0; k < b->nslots; k++) {
            Slot s = b->slots[k];
            if (s.field == F_VALUE && !scalar_fits(s.kind, PyTuple_GET_ITEM(args, s.param))) {
                b = NULL; /* this value needs another definition: ask Python */
                break;
            }
        }
    }
    PyObject *bound = NULL; /* (binding, cacheable, arguments) from Python's slow path */
    if (b == NULL) {
        bound = PyObject_CallMethodObjArgs(l->kernel, str_bind, (PyObject *)l, args, NULL);
        if (bound == NULL) return -1;
        PyObject *new_args;
        int cacheable;
        if (!PyArg_ParseTuple(bound, "O!pO!", &BindingType, &b, &cacheable, &PyTuple_Type,
                              &new_args)) {
            Py_DECREF(bound);
            return -1;
        }
        if (new_args != args) { /* foreign arrays, read by Python as usm_ndarray views */
            args = new_args;
            for (Py_ssize_t i = 0; i < n; i++) {
                if (read_array(PyTuple_GET_ITEM(args, i), &argv[i], &desc[i]) < 0) {
                    Py_DECREF(bound);
                    return -1;
                }
            }
        }
        if (cacheable && remember_binding(l, desc, b) < 0) { Py_DECREF(bound); return -1; }
    }
    int64_t result = -1;
    if (l->ndim == 0) { /* a zero-sized range: nothing to run */
        if (event != NULL && (*event = PyObject_CallNoArgs(completed_event)) == NULL) result = -1;
        else result = COMPLETED;
        Py_XDECREF(bound);
        return result;
    }

    /* Pack the kernel arguments in the order types/params.py describes. */
    Dependencies deps;
    deps.all = deps.refs;
    deps.count = 0;
    deps.capacity = 64;
    deps.keep = NULL;
    deps.made = NULL;
    Py_ssize_t nslots = b->nslots;
    Value values[nslots + 1];
    void *argp[nslots + 1];
    int types[nslots + 1];
    LocalAccessorArg locals[nslots + 1];
    size_t local_bytes = 0;
    for (Py_ssize_t k = 0; k < nslots; k++) {
        Slot s = b->slots[k];
        UsmArray *a = argv[s.param].array;
        Value *v = &values[k];
        switch (s.field) {
        case F_DATA: v->p = a->data; break;
        case F_SHAPE: v->i = a->shape[s.axis]; break;
        case F_STRIDE: v->i = stride_of(a, s.axis); break;
        case F_LOCAL:
        case F_LOCAL_SHAPE:
            if (read_local(PyTuple_GET_ITEM(args, s.param), s.field, s.axis, v) < 0) goto done;
            if (s.field == F_LOCAL) {
                local_bytes += v->u; /* one byte buffer of the accessor's size */
                locals[k] = (LocalAccessorArg){1, ARG_UINT8, v->u, 1, 1};
            }
            break;
        default:
            if (pack_scalar(s.kind, s.field, PyTuple_GET_ITEM(args, s.param), v) < 0) goto done;
        }
        argp[k] = s.kind == K_POINTER ? v->p : s.kind == K_LOCAL ? (void *)&locals[k] : (void *)v;
        types[k] = kind_argtype[s.kind];
    }
    if (local_bytes > b->local_limit) {
        PyErr_Format(range_error, "kernel '%U': its LocalAccessor arguments take %zu bytes of "
                     "work-group memory, more than the %zu the device has left for them; make "
                     "them smaller", l->name, local_bytes, b->local_limit);
        goto done;
    }
    if (b->flag_ptr != NULL) {
        memset(b->flag_ptr, 0, (size_t)b->flag_size);
        values[nslots].p = argp[nslots] = b->flag_ptr;
        types[nslots] = ARG_VOID_PTR;
        nslots++;
    }

    /* Ordering (ordering.py): after dpnp's work when it registered any since our last
       launch, after our previous launch on this queue, and after depends_on. Nothing from
       reading the previous launch to recording this one gives up the GIL.
       Launches from compiled code go straight to OpenCL where they can: not a launch with
       dependencies (they are sycl::events), nor one after a launch through SYCL until that
       has left the ring (only a cl_event can be waited for on OpenCL; asking SYCL whether
       the launch completed, every 8th launch, made the loop 0.71x submit_async behind a
       backlog, against the 0.59x of a launch from Python there). A launch from Python goes
       through SYCL: its dpctl.SyclEvent costs less from SYCL's submission than made of a
       cl_event (make_event: 13-16 us a launch, against 8-10). */
    ring_make_room();
    QueueOrder *order = b->order;
    int64_t last = ring_holds(order->last) ? order->last : -1;
    int on_opencl = b->cl_kernel != NULL && event == NULL && depends_on == NULL &&
                    !order->dirty && (last < 0 || ring[(size_t)last & RING_MASK].order != NULL);
    void *ref;
    size_t local_buffer[3];
    const size_t *local = local_size_of(l, b, local_buffer);
    if (on_opencl) {
        cl_handle after = last >= 0 ? ring[(size_t)last & RING_MASK].event : NULL;
        if (launch_opencl(l, b, values, nslots, local, after, &ref) < 0) goto done;
    } else {
        if (depends_on != NULL && deps_add_sequence(&deps, depends_on) < 0) goto done;
        if (order->dirty) {
            deps.keep = PyObject_CallMethodNoArgs(order->keeper, str_get_submitted);
            if (deps.keep == NULL) goto done;
            if (deps_add_sequence(&deps, deps.keep) < 0) goto done;
            order->dirty = 0;
        }
        if (last >= 0) {
            EventRef previous = ring[(size_t)last & RING_MASK].event;
            if (ring[(size_t)last & RING_MASK].order != NULL)
                previous = deps.made = sycl_event_of_cl((size_t)last & RING_MASK);
            if (deps_add_ref(&deps, previous) < 0) goto done;
        }
        if (local != NULL)
            ref = SubmitNDRange(b->kernel_ref, b->queue_ref, argp, types, (size_t)nslots,
                                l->global, local, (size_t)l->ndim, deps.all, deps.count);
        else
            ref = SubmitRange(b->kernel_ref, b->queue_ref, argp, types, (size_t)nslots,
                              l->global, (size_t)l->ndim, deps.all, deps.count);
        if (ref == NULL) {
            PyErr_Format(submit_error, "kernel '%U': the SYCL runtime refused the launch",
                         l->name);
            goto done;
        }
    }
    if (b->flag_ptr != NULL) {
        /* Debug mode: wait, and raise what a work-item raised. The GIL stays held so that no
           other thread reuses this Binding's flag meanwhile. */
        if (on_opencl) cl.wait(1, &ref);
        else EventWait(ref);
        if (*b->flag_ptr != 0) {
            if (on_opencl) {
                cl.release_event(ref);
                b->cl_args_set = 0; /* this launch's arrays are not kept */
            } else {
                EventDelete(ref);
            }
            PyObject *r = PyObject_CallNoArgs(b->on_error);
            Py_XDECREF(r);
            goto done;
        }
    }
    int64_t position = ring_push(ref, args, on_opencl ? order : NULL);
    if (on_opencl) b->cl_last = position;
    if (last >= 0) ring_supersede(order, last, position);
    order->last = position;
    order->published = 0;
    /* Fails only out of memory: the launch runs, its arguments kept alive. */
    if (event != NULL && (*event = event_object(ref)) == NULL) goto done;
    result = position;
    /* Up to 64 a time: launches from compiled code can outpace an idle device, and the ring
       then holds hundreds of launches it is to catch up with once the device has (a launch
       after one through SYCL goes through SYCL until that has left the ring). Pops may run
       finalizers: after that. */
    if ((ring_tail & 7) == 0) ring_release_completed(64);
done:
    if (deps.all != deps.refs) PyMem_Free(deps.all);
    if (deps.made != NULL) EventDelete(deps.made);
    Py_XDECREF(deps.keep);
    Py_XDECREF(bound);
    return result;
}

static PyObject *Launcher_get_name(Launcher *l, void *unused) { return Py_NewRef(l->name); }

static PyObject *Launcher_get_range(Launcher *l, void *unused) { return Py_NewRef(l->range); }

static PyObject *Launcher_get_ndim(Launcher *l, void *unused) { return PyLong_FromLong(l->dims); }

static PyObject *Launcher_get_kernel(Launcher *l, void *unused)
{
    return Py_NewRef(l->kernel ? l->kernel : Py_None);
}

static PyGetSetDef Launcher_getset[] = {
    {"kernel", (getter)Launcher_get_kernel, NULL, "the kernel this launcher runs", NULL},
    {"name", (getter)Launcher_get_name, NULL, "the kernel's name", NULL},
    {"range", (getter)Launcher_get_range, NULL, "the dk.Range or dk.NdRange launched", NULL},
    {"ndim", (getter)Launcher_get_ndim, NULL, "the range's dimension count", NULL},
    {NULL}};

static PyTypeObject LauncherType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "dpex_kernels.dispatcher._launcher.Launcher",
    .tp_basicsize = sizeof(Launcher),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE,
    .tp_doc = "kernel[range]: calling it launches the kernel and returns a dpctl.SyclEvent.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Launcher_init,
    .tp_traverse = (traverseproc)Launcher_traverse,
    .tp_clear = (inquiry)Launcher_clear,
    .tp_dealloc = (destructor)Launcher_dealloc,
    .tp_call = (ternaryfunc)Launcher_call,
    .tp_getset = Launcher_getset,
};

/* ---- KernelCore: the base of every launchable kernel; kernel[range] in C ------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *launchers;       /* range -> Launcher */
    PyObject *njit_launcher;   /* the Launcher of the range compiled code launched last */
    int64_t njit_range[7];     /* its (ndim, global[3], local[3]) */
} KernelCore;

static PyObject *KernelCore_getitem(KernelCore *k, PyObject *key)
{
    if (k->launchers == NULL && (k->launchers = PyDict_New()) == NULL) return NULL;
    PyObject *found = PyDict_GetItemWithError(k->launchers, key);
    if (found != NULL) return Py_NewRef(found);
    if (PyErr_Occurred()) { /* an unhashable range: validate it, remember nothing */
        if (!PyErr_ExceptionMatches(PyExc_TypeError)) return NULL;
        PyErr_Clear();
        return PyObject_CallMethodOneArg((PyObject *)k, str_new_launcher, key);
    }
    PyObject *launcher = PyObject_CallMethodOneArg((PyObject *)k, str_new_launcher, key);
    if (launcher == NULL) return NULL;
    if (PyDict_GET_SIZE(k->launchers) >= 256) PyDict_Clear(k->launchers);
    if (PyDict_SetItem(k->launchers, key, launcher) < 0) { Py_DECREF(launcher); return NULL; }
    return launcher;
}

static int KernelCore_traverse(KernelCore *k, visitproc visit, void *arg)
{
    Py_VISIT(k->launchers);
    Py_VISIT(k->njit_launcher);
    return 0;
}

static int KernelCore_clear(KernelCore *k)
{
    Py_CLEAR(k->launchers);
    Py_CLEAR(k->njit_launcher);
    return 0;
}

static void KernelCore_dealloc(KernelCore *k)
{
    /* Python subclasses' own dealloc untracks the object and releases the type. */
    PyObject_GC_UnTrack(k);
    KernelCore_clear(k);
    Py_TYPE(k)->tp_free((PyObject *)k);
}

static PyMappingMethods KernelCore_mapping = {.mp_subscript = (binaryfunc)KernelCore_getitem};

static PyTypeObject KernelCoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "dpex_kernels.dispatcher._launcher.KernelCore",
    .tp_basicsize = sizeof(KernelCore),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The base of launchable kernels: kernel[range] returns a cached Launcher.",
    .tp_new = PyType_GenericNew,
    .tp_traverse = (traverseproc)KernelCore_traverse,
    .tp_clear = (inquiry)KernelCore_clear,
    .tp_dealloc = (destructor)KernelCore_dealloc,
    .tp_as_mapping = &KernelCore_mapping,
};

/* ---- entry points for Numba-compiled host code (dispatcher/njit_launch.py) -----------------
   Exported C functions whose addresses njit.py registers with LLVM. Each takes the GIL itself,
   so @njit(nogil=True) code may call them too. */

/* Fills Numba's array struct {meminfo, parent, nitems, itemsize, data, shape[nd], strides[nd]}
   from a dpnp.ndarray or usm_ndarray; the parent is the object itself (borrowed). */
int dpex_unbox_usm_array(PyObject *obj, int64_t *out, int ndim)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    int status = -1;
    Argument arg;
    Descriptor desc;
    int r = read_array(obj, &arg, &desc);
    if (r == 0)
        PyErr_Format(PyExc_TypeError,
                     "a %s reached compiled code where a dpnp array or usm_ndarray was typed",
                     Py_TYPE(obj)->tp_name);
    if (r <= 0) goto done;
    UsmArray *a = arg.array;
    if (a->nd != ndim) {
        PyErr_Format(PyExc_TypeError, "internal error: a %d-d array unboxed as %d-d", a->nd, ndim);
        goto done;
    }
    int64_t nitems = 1;
    for (int i = 0; i < ndim; i++) nitems *= a->shape[i];
    out[0] = 0;                               /* meminfo: none, the object owns the memory */
    out[1] = (int64_t)(uintptr_t)obj;         /* parent */
    out[2] = nitems;
    out[3] = itemsize_of_typenum[a->typenum & 31];
    out[4] = (int64_t)(uintptr_t)a->data;
    for (int i = 0; i < ndim; i++) {
        out[5 + i] = a->shape[i];
        out[5 + ndim + i] = stride_of(a, i);
    }
    status = 0;
done:
    PyGILState_Release(gil);
    return status;
}

static PyObject *range_type, *nd_range_type; /* dk.Range and dk.NdRange */

static PyObject *njit_launcher_for(KernelCore *k, const int64_t *key)
{
    if (k->njit_launcher != NULL && memcmp(k->njit_range, key, sizeof(k->njit_range)) == 0)
        return k->njit_launcher;
    int ndim = (int)key[0];
    PyObject *global = PyTuple_New(ndim), *local = key[4] ? PyTuple_New(ndim) : NULL, *range;
    if (global == NULL || (key[4] && local == NULL)) goto fail;
    for (int i = 0; i < ndim; i++) {
        PyTuple_SET_ITEM(global, i, PyLong_FromLongLong(key[1 + i]));
        if (local) PyTuple_SET_ITEM(local, i, PyLong_FromLongLong(key[4 + i]));
    }
    range = local ? PyObject_CallFunctionObjArgs(nd_range_type, global, local, NULL)
                  : PyObject_Call(range_type, global, NULL);
    Py_CLEAR(global);
    Py_CLEAR(local);
    if (range == NULL) return NULL;
    PyObject *launcher = KernelCore_getitem(k, range);
    Py_DECREF(range);
    if (launcher == NULL) return NULL;
    Py_XSETREF(k->njit_launcher, launcher);
    memcpy(k->njit_range, key, sizeof(k->njit_range));
    return launcher;
fail:
    Py_XDECREF(global);
    Py_XDECREF(local);
    return NULL;
}

/* kernel[range](*args) from compiled code: `args` is a tuple the caller built (arrays are their
   Python objects); `local` is NULL for a Range. Returns the launch's ring position (what an
   event is in compiled code), or -1 with a Python exception set. */
int64_t dpex_njit_launch(PyObject *kernel, PyObject *args, int ndim, const int64_t *global,
                         const int64_t *local)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    int64_t handle = -1;
    int64_t key[7] = {ndim, 1, 1, 1, 0, 0, 0};
    for (int i = 0; i < ndim; i++) {
        key[1 + i] = global[i];
        if (local) key[4 + i] = local[i];
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); i++) {
        if (PyTuple_GET_ITEM(args, i) == NULL) {
            PyErr_SetString(PyExc_TypeError,
                            "a kernel launched from compiled code takes arrays passed in from "
                            "Python; this one was made inside the compiled function");
            goto done;
        }
    }
    /* Owned while launching: another thread may replace the kernel's cached launcher. */
    Launcher *l = (Launcher *)Py_XNewRef(njit_launcher_for((KernelCore *)kernel, key));
    if (l == NULL) goto done;
    if (PyTuple_GET_SIZE(args) != l->nparams) {
        PyErr_Format(PyExc_TypeError, "%U() takes %zd positional argument(s) but %zd were given",
                     l->name, l->nparams, PyTuple_GET_SIZE(args));
        Py_DECREF(l);
        goto done;
    }
    /* The tuple holds only what the caller passed in: it cannot be part of a cycle, so the
       collector need not follow it while the ring keeps it alive. */
    if (PyObject_GC_IsTracked(args)) PyObject_GC_UnTrack(args);
    handle = launch(l, args, NULL, NULL);
    Py_DECREF(l);
done:
    PyGILState_Release(gil);
    return handle;
}

void dpex_event_wait(int64_t handle)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    if (ring_holds(handle)) wait_without_gil(handle);
    PyGILState_Release(gil);
}

/* A new reference to a dpctl.SyclEvent for a ring position (a completed one if it left). */
PyObject *dpex_event_object(int64_t handle)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *result = ring_holds(handle) ? ring_event_object(handle)
                                          : PyObject_CallNoArgs(completed_event);
    PyGILState_Release(gil);
    return result;
}

#define ADDRESS(f) (unsigned long long)(uintptr_t)(f)

static PyObject *array_key(PyObject *m, PyObject *obj)
{
    /* What decides a dpnp array's or usm_ndarray's usm_array type, or None for other objects:
       (type number, ndim, contiguity and writable flags, memory type, queue). */
    Argument arg;
    Descriptor d;
    int r = read_array(obj, &arg, &d);
    if (r < 0) return NULL;
    if (r == 0 || d.type == NULL) Py_RETURN_NONE;
    return Py_BuildValue("(iiiOO)", d.typenum, d.nd, d.flags, (PyObject *)d.type,
                         (PyObject *)d.queue);
}

static PyObject *event_type(PyObject *m, PyObject *unused)
{
    return Py_NewRef(EventType.tp_base ? (PyObject *)&EventType : Py_None);
}

static PyObject *c_functions(PyObject *m, PyObject *unused)
{
    /* Ours, and dpctl's C functions as resolved at init (for dk.raw_launch in @cfunc code). */
    return Py_BuildValue("{sKsKsKsKsKsKsK}",
                         "dpex_unbox_usm_array", ADDRESS(dpex_unbox_usm_array),
                         "dpex_njit_launch", ADDRESS(dpex_njit_launch),
                         "dpex_event_wait", ADDRESS(dpex_event_wait),
                         "dpex_event_object", ADDRESS(dpex_event_object),
                         "DPCTLQueue_SubmitRange", ADDRESS(SubmitRange),
                         "DPCTLEvent_Wait", ADDRESS(EventWait),
                         "DPCTLEvent_Delete", ADDRESS(EventDelete));
}

static PyObject *arg_types(PyObject *m, PyObject *unused)
{
    /* The DPCTLKernelArgType of each slot kind of types/params.py. */
    PyObject *d = PyDict_New();
    for (int k = 0; d != NULL && k <= K_LOCAL; k++) {
        PyObject *v = PyLong_FromLong(kind_argtype[k]);
        if (v == NULL || PyDict_SetItemString(d, kind_names[k], v) < 0) Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

/* ---- set-up ------------------------------------------------------------------------------- */

static void *capsule_function(PyObject *module_capi, const char *name)
{
    PyObject *capsule = PyDict_GetItemString(module_capi, name);
    if (capsule == NULL || !PyCapsule_CheckExact(capsule)) {
        PyErr_Format(PyExc_ImportError, "dpctl exports no C function %s", name);
        return NULL;
    }
    return PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule));
}

static int resolve(void *library, void **target, const char *symbol)
{
    *target = dlsym(library, symbol);
    if (*target == NULL) {
        PyErr_Format(PyExc_ImportError, "libDPCTLSyclInterface has no %s", symbol);
        return -1;
    }
    return 0;
}

/* The OpenCL launch path's functions (see its section); cl_ready stays 0 without any one. */
static void resolve_opencl(const char *opencl_path, const char *sycl_path)
{
    void *opencl = opencl_path ? dlopen(opencl_path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    void *sycl = sycl_path ? dlopen(sycl_path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    struct { void **target; void *library; const char *symbol; } table[] = {
        {(void **)&cl.enqueue, opencl, "clEnqueueNDRangeKernel"},
        {(void **)&cl.set_arg, opencl, "clSetKernelArg"},
        {(void **)&cl.event_info, opencl, "clGetEventInfo"},
        {(void **)&cl.queue_info, opencl, "clGetCommandQueueInfo"},
        {(void **)&cl.device_info, opencl, "clGetDeviceInfo"},
        {(void **)&cl.wait, opencl, "clWaitForEvents"},
        {(void **)&cl.retain_event, opencl, "clRetainEvent"},
        {(void **)&cl.release_event, opencl, "clReleaseEvent"},
        {(void **)&cl.clone_kernel, opencl, "clCloneKernel"},
        {(void **)&cl.release_kernel, opencl, "clReleaseKernel"},
        {(void **)&cl.release_queue, opencl, "clReleaseCommandQueue"},
        {(void **)&cl.extension, opencl, "clGetExtensionFunctionAddressForPlatform"},
        {(void **)&cl.queue_native, sycl, "_ZNK4sycl3_V15queue9getNativeERi"},
        {(void **)&cl.kernel_native, sycl, "_ZNK4sycl3_V16kernel9getNativeEv"},
        {(void **)&cl.make_event, sycl,
         "_ZN4sycl3_V16detail10make_eventEmRKNS0_7contextENS0_7backendE"},
        {(void **)&cl.new_bytes, sycl, "_Znwm"}, /* found among libsycl's dependencies */
    };
    cl_ready = 0;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        *table[i].target = table[i].library ? dlsym(table[i].library, table[i].symbol) : NULL;
        if (*table[i].target == NULL) return;
    }
    cl_ready = 1;
}

static PyObject *init(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *names[] = {"library", "event_capi", "usm_ndarray", "dpnp_ndarray",
                            "sycl_event", "memory_types", "itemsizes", "completed_event",
                            "submit_error", "range_error", "range_type", "nd_range_type",
                            "local_accessor", "wait", "opencl_library", "sycl_library", NULL};
    const char *library_path, *opencl_path = NULL, *sycl_path = NULL;
    PyObject *event_capi, *usm, *dpnp_nd, *event, *memtypes, *itemsizes, *completed, *error;
    PyObject *range, *nd_range, *accessor, *wait, *bad_range;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sO!O!O!O!OO!OOOOOO!O|zz", names, &library_path,
                                     &PyDict_Type, &event_capi, &PyType_Type, &usm,
                                     &PyType_Type, &dpnp_nd, &PyType_Type, &event, &memtypes,
                                     &PyDict_Type, &itemsizes, &completed, &error, &bad_range,
                                     &range, &nd_range, &PyType_Type, &accessor, &wait,
                                     &opencl_path, &sycl_path))
        return NULL;
    void *library = dlopen(library_path, RTLD_NOW | RTLD_NOLOAD);
    if (library == NULL) library = dlopen(library_path, RTLD_NOW);
    if (library == NULL)
        return PyErr_Format(PyExc_ImportError, "cannot open %s: %s", library_path, dlerror());
    if (resolve(library, (void **)&SubmitRange, "DPCTLQueue_SubmitRange") < 0 ||
        resolve(library, (void **)&SubmitNDRange, "DPCTLQueue_SubmitNDRange") < 0 ||
        resolve(library, (void **)&EventWait, "DPCTLEvent_Wait") < 0 ||
        resolve(library, (void **)&EventDelete, "DPCTLEvent_Delete") < 0 ||
        resolve(library, (void **)&EventCopy, "DPCTLEvent_Copy") < 0 ||
        resolve(library, (void **)&EventStatus, "DPCTLEvent_GetCommandExecutionStatus") < 0)
        return NULL;
    resolve_opencl(opencl_path, sycl_path);
    if ((SyclEvent_Make = capsule_function(event_capi, "SyclEvent_Make")) == NULL ||
        (SyclEvent_GetEventRef = capsule_function(event_capi, "SyclEvent_GetEventRef")) == NULL)
        return NULL;
    PyObject *seq = PySequence_Fast(memtypes, "memory_types must be a sequence");
    if (seq == NULL) return NULL;
    if (PySequence_Fast_GET_SIZE(seq) != 3) {
        Py_DECREF(seq);
        return PyErr_Format(PyExc_ValueError, "memory_types must name 3 types");
    }
    for (int i = 0; i < 3; i++) {
        PyObject *t = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyType_Check(t)) { Py_DECREF(seq); return PyErr_Format(PyExc_TypeError, "not a type"); }
        memory_types[i] = (PyTypeObject *)Py_NewRef(t);
    }
    Py_DECREF(seq);
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(itemsizes, &pos, &key, &value)) {
        long typenum = PyLong_AsLong(key), size = PyLong_AsLong(value);
        if (PyErr_Occurred()) return NULL;
        if (typenum >= 0 && typenum < 32) itemsize_of_typenum[typenum] = (int)size;
    }
    PyObject *slot = PyObject_GetAttr(dpnp_nd, str_array_obj);
    if (slot == NULL) return NULL;
    if (!Py_IS_TYPE(slot, &PyMemberDescr_Type) ||
        ((PyMemberDescrObject *)slot)->d_member->type != T_OBJECT_EX) {
        Py_DECREF(slot);
        return PyErr_Format(PyExc_ImportError, "dpnp.ndarray._array_obj is not a slot");
    }
    dpnp_array_offset = ((PyMemberDescrObject *)slot)->d_member->offset;
    Py_DECREF(slot);
    usm_ndarray_type = (PyTypeObject *)Py_NewRef(usm);
    dpnp_ndarray_type = (PyTypeObject *)Py_NewRef(dpnp_nd);
    sycl_event_type = (PyTypeObject *)Py_NewRef(event);
    if (EventType.tp_base == NULL) {
        EventType.tp_base = sycl_event_type;
        EventType.tp_basicsize = sycl_event_type->tp_basicsize;
        EventType.tp_methods = Event_methods;
        if (PyType_Ready(&EventType) < 0) return NULL;
    }
    interruptible_wait = Py_NewRef(wait);
    completed_event = Py_NewRef(completed);
    submit_error = Py_NewRef(error);
    range_error = Py_NewRef(bad_range);
    range_type = Py_NewRef(range);
    nd_range_type = Py_NewRef(nd_range);
    local_accessor_type = (PyTypeObject *)Py_NewRef(accessor);
    ready = 1;
    Py_RETURN_NONE;
}

static PyObject *check_layouts(PyObject *m, PyObject *args)
{
    /* Reads `array` through the declared layouts; Python compares with the public attributes:
       (data pointer, nd, shape, strides in elements, typenum, flags, memory, queue). */
    PyObject *x;
    if (!PyArg_ParseTuple(args, "O", &x)) return NULL;
    if (!ready || Py_TYPE(x) != usm_ndarray_type)
        return PyErr_Format(PyExc_TypeError, "check_layouts takes a usm_ndarray after init()");
    if (usm_ndarray_type->tp_basicsize != (Py_ssize_t)sizeof(UsmArray))
        return PyErr_Format(PyExc_ImportError, "usm_ndarray is %zd bytes, expected %zd",
                            usm_ndarray_type->tp_basicsize, (Py_ssize_t)sizeof(UsmArray));
    UsmArray *a = (UsmArray *)x;
    if (a->nd < 0 || a->nd > 64 || a->base == NULL)
        return PyErr_Format(PyExc_ImportError, "usm_ndarray fields are not where expected");
    int known = 0;
    for (int i = 0; i < 3; i++) known |= Py_TYPE(a->base) == memory_types[i];
    if (!known || Py_TYPE(a->base)->tp_basicsize < (Py_ssize_t)sizeof(UsmMemory))
        return PyErr_Format(PyExc_ImportError, "usm_ndarray's base is not a USM memory object");
    PyObject *shape = PyTuple_New(a->nd), *strides = PyTuple_New(a->nd);
    if (shape == NULL || strides == NULL) { Py_XDECREF(shape); Py_XDECREF(strides); return NULL; }
    for (int i = 0; i < a->nd; i++) {
        PyTuple_SET_ITEM(shape, i, PyLong_FromSsize_t(a->shape[i]));
        PyTuple_SET_ITEM(strides, i, PyLong_FromSsize_t(element_stride(a, i)));
    }
    UsmMemory *mem = (UsmMemory *)a->base;
    return Py_BuildValue("(KiNNiiOO)", (unsigned long long)(uintptr_t)a->data, a->nd, shape,
                         strides, a->typenum, a->flags, a->base, mem->queue);
}

/* Whether an OpenCL queue's device takes a work-group size that does not divide the global
   size (CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, OpenCL 3.0; an older device or a failed
   query: no). `queue_ref` is a DPCTLSyclQueueRef of an OpenCL queue. */
static PyObject *uneven_work_groups(PyObject *m, PyObject *arg)
{
    unsigned long long ref = PyLong_AsUnsignedLongLong(arg);
    if (PyErr_Occurred()) return NULL;
    if (!cl_ready) Py_RETURN_FALSE;
    int32_t descriptor = 0;
    cl_handle queue = (cl_handle)(uintptr_t)cl.queue_native((QueueRef)(uintptr_t)ref, &descriptor);
    cl_handle device = NULL;
    uint32_t uneven = 0; /* a cl_bool */
    int known = queue != NULL &&
                cl.queue_info(queue, CL_QUEUE_DEVICE, sizeof device, &device, NULL) == 0 &&
                cl.device_info(device, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, sizeof uneven,
                               &uneven, NULL) == 0;
    if (queue != NULL) cl.release_queue(queue);
    return PyBool_FromLong(known && uneven);
}

static PyMethodDef module_methods[] = {
    {"init", (PyCFunction)(void (*)(void))init, METH_VARARGS | METH_KEYWORDS,
     "Resolve dpctl's C functions and the types the launcher reads."},
    {"check_layouts", check_layouts, METH_VARARGS,
     "What the declared layouts read from a usm_ndarray, for the import-time check."},
    {"drain", drain, METH_NOARGS, "Wait for every launch still in flight."},
    {"uneven_work_groups", uneven_work_groups, METH_O,
     "Whether an OpenCL queue's device takes a smaller last work-group."},
    {"release_completed", release_completed, METH_NOARGS,
     "Let the arguments of completed launches go."},
    {"in_flight", in_flight, METH_NOARGS, "How many launches the keep-alive ring holds."},
    {"arg_types", arg_types, METH_NOARGS, "The DPCTLKernelArgType of each slot kind."},
    {"array_key", array_key, METH_O, "What decides a USM array's type, read from its struct."},
    {"event_type", event_type, METH_NOARGS, "The type of the events launches return."},
    {"c_functions", c_functions, METH_NOARGS,
     "Addresses of the entry points for Numba-compiled code (dispatcher/njit_launch.py)."},
    {NULL}};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_launcher", "The compiled launch path of dpex_kernels.", -1,
    module_methods};

PyMODINIT_FUNC PyInit__launcher(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    str_array_obj = PyUnicode_InternFromString("_array_obj");
    str_nbytes = PyUnicode_InternFromString("nbytes");
    str_kind = PyUnicode_InternFromString("_kind");
    str_shape = PyUnicode_InternFromString("shape");
    str_bind = PyUnicode_InternFromString("_bind");
    str_new_launcher = PyUnicode_InternFromString("_new_launcher");
    str_add_to_submitted = PyUnicode_InternFromString("add_to_submitted_events");
    str_get_submitted = PyUnicode_InternFromString("get_submitted_events");
    PyTypeObject *types[] = {&QueueOrderType, &BindingType, &LauncherType, &KernelCoreType};
    const char *type_names[] = {"QueueOrder", "Binding", "Launcher", "KernelCore"};
    for (int i = 0; i < 4; i++) {
        if (PyType_Ready(types[i]) < 0 ||
            PyModule_AddObjectRef(m, type_names[i], (PyObject *)types[i]) < 0) {
            Py_DECREF(m);
            return NULL;
        }
    }
    if (PyModule_AddIntConstant(m, "MAX_IN_FLIGHT", MAX_IN_FLIGHT) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
