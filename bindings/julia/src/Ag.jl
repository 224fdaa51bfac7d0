"""
    Ag

Julia binding of the ag autograd C library. `generated.jl` (one `ccall`
wrapper per C function, the constants and structs) is generated from
ag-api.json by `gen/gen_julia.py`; this file is the thin hand-written API.
The library is found through the environment variable `AG_LIBRARY`
(a path to libag.so.0), else by its soname.
"""
module Ag

const libag = get(ENV, "AG_LIBRARY", "libag.so.0")

include("generated.jl")

export Context, Tensor, AgError, release!, backward!, grad, requires_grad!, shape, tovector

"""An ag failure: its status, the status name and ag's message."""
struct AgError <: Exception
    status::Int32
    name::String
    message::String
end

Base.showerror(io::IO, e::AgError) = print(io, e.name, ": ", e.message)

# Read the message right after the failing call: Julia tasks may migrate
# between threads only at yield points, and there is none in between.
function check(status::Integer)
    if status != AG_OK
        msg = unsafe_string(ag_last_error_message())
        throw(AgError(Int32(status), unsafe_string(ag_status_name(Int32(status))), msg))
    end
    nothing
end

"""A context; freed by `release!` or, as a fallback, the finalizer."""
mutable struct Context
    ptr::Ptr{ag_context}
    function Context(; num_threads::Integer = 0)
        opts = Ref{ag_context_options}()
        check(ag_context_options_init(opts))
        opts[] = ag_context_options(opts[].struct_size, Int32(num_threads))
        out = Ref{Ptr{ag_context}}(C_NULL)
        check(ag_context_create(out, opts))
        c = new(out[])
        finalizer(release!, c)
    end
end

"""One reference to an ag tensor; freed by `release!` or the finalizer."""
mutable struct Tensor
    ptr::Ptr{ag_tensor}
    function Tensor(p::Ptr{ag_tensor})
        t = new(p)
        finalizer(release!, t)
    end
end

function release!(c::Context)
    p, c.ptr = c.ptr, C_NULL
    p == C_NULL || ag_context_release(p)
    nothing
end

function release!(t::Tensor)
    p, t.ptr = t.ptr, C_NULL
    p == C_NULL || ag_tensor_release(p)
    nothing
end

handle(t::Tensor) = t.ptr == C_NULL ? throw(AgError(AG_ERR_INVALID_ARGUMENT, "AG_ERR_INVALID_ARGUMENT", "tensor was released")) : t.ptr

dtype_of(::Type{Float32}) = AG_F32
dtype_of(::Type{Float64}) = AG_F64
dtype_of(::Type{Int64}) = AG_I64
eltype_of(d) = d == AG_F32 ? Float32 : d == AG_F64 ? Float64 : d == AG_I64 ? Int64 : Bool

"""Tensor(ctx, data, dims...): copies `data` (row-major) into a new tensor."""
function Tensor(ctx::Context, data::AbstractVector{T}, dims::Integer...) where {T<:Union{Float32,Float64,Int64}}
    shp = isempty(dims) ? Int64[length(data)] : Int64[dims...]
    prod(shp) == length(data) || throw(DimensionMismatch("shape $(shp) needs $(prod(shp)) elements"))
    buf = Vector{T}(data)
    out = Ref{Ptr{ag_tensor}}(C_NULL)
    GC.@preserve buf shp check(ag_tensor_create(out, ctx.ptr, dtype_of(T), pointer(shp), Int32(length(shp)), pointer(buf)))
    Tensor(out[])
end

function shape(t::Tensor)
    dims = zeros(Int64, AG_MAX_DIMS)
    GC.@preserve dims check(ag_tensor_shape(handle(t), pointer(dims), Int32(AG_MAX_DIMS)))
    dims[1:ag_tensor_ndim(t.ptr)]
end

"""The elements of `t`, copied, in row-major order."""
function tovector(t::Tensor)
    T = eltype_of(ag_tensor_dtype(handle(t)))
    v = Vector{T}(undef, ag_tensor_numel(t.ptr))
    GC.@preserve v check(ag_tensor_copy_data(t.ptr, pointer(v), Csize_t(sizeof(v))))
    v
end

requires_grad!(t::Tensor, on::Bool = true) = (check(ag_tensor_requires_grad(handle(t), Int32(on))); t)

"""backward!(t[, gradient]): accumulate gradients into the leaves."""
function backward!(t::Tensor, gradient::Union{Tensor,Nothing} = nothing)
    g = gradient === nothing ? Ptr{ag_tensor}(C_NULL) : handle(gradient)
    check(ag_backward(handle(t), g, Ptr{ag_backward_options}(C_NULL)))
    nothing
end

"""The leaf's gradient, or `nothing`."""
function grad(t::Tensor)
    out = Ref{Ptr{ag_tensor}}(C_NULL)
    check(ag_tensor_grad(out, handle(t)))
    out[] == C_NULL ? nothing : Tensor(out[])
end

function binary(f, a::Tensor, b::Tensor)
    out = Ref{Ptr{ag_tensor}}(C_NULL)
    check(f(out, handle(a), handle(b)))
    Tensor(out[])
end

Base.:+(a::Tensor, b::Tensor) = binary(ag_op_add, a, b)
Base.:-(a::Tensor, b::Tensor) = binary(ag_op_sub, a, b)
Base.:*(a::Tensor, b::Tensor) = binary(ag_op_mul, a, b)
Base.:/(a::Tensor, b::Tensor) = binary(ag_op_div, a, b)

function Base.:^(a::Tensor, p::Real)
    out = Ref{Ptr{ag_tensor}}(C_NULL)
    check(ag_op_pow_scalar(out, handle(a), Float64(p)))
    Tensor(out[])
end

function Base.sum(a::Tensor)
    out = Ref{Ptr{ag_tensor}}(C_NULL)
    check(ag_op_sum(out, handle(a)))
    Tensor(out[])
end

end # module
