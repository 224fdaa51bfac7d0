//! Arithmetic operators on tensors (`&a * &b`, `&a + 1.0`, `-&a`, and owned
//! left operands for chaining). They panic with ag's error; use the methods
//! (`a.mul(&b)?`) to get a `Result`.

use crate::{Result, Tensor};
use std::ops::{Add, Div, Mul, Neg, Sub};

fn unwrap_op<T>(r: Result<T>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

macro_rules! binary_operator {
    ($trait:ident, $method:ident, $op:ident) => {
        impl $trait<&Tensor> for &Tensor {
            type Output = Tensor;
            fn $method(self, rhs: &Tensor) -> Tensor {
                unwrap_op(Tensor::$op(self, rhs))
            }
        }
        impl $trait<Tensor> for &Tensor {
            type Output = Tensor;
            fn $method(self, rhs: Tensor) -> Tensor {
                unwrap_op(Tensor::$op(self, &rhs))
            }
        }
        impl $trait<&Tensor> for Tensor {
            type Output = Tensor;
            fn $method(self, rhs: &Tensor) -> Tensor {
                unwrap_op(Tensor::$op(&self, rhs))
            }
        }
        impl $trait<Tensor> for Tensor {
            type Output = Tensor;
            fn $method(self, rhs: Tensor) -> Tensor {
                unwrap_op(Tensor::$op(&self, &rhs))
            }
        }
        impl $trait<f64> for &Tensor {
            type Output = Tensor;
            fn $method(self, rhs: f64) -> Tensor {
                unwrap_op(self.scalar_like(rhs).and_then(|s| Tensor::$op(self, &s)))
            }
        }
        impl $trait<f64> for Tensor {
            type Output = Tensor;
            fn $method(self, rhs: f64) -> Tensor {
                $trait::$method(&self, rhs)
            }
        }
        impl $trait<&Tensor> for f64 {
            type Output = Tensor;
            fn $method(self, rhs: &Tensor) -> Tensor {
                unwrap_op(rhs.scalar_like(self).and_then(|s| Tensor::$op(&s, rhs)))
            }
        }
        impl $trait<Tensor> for f64 {
            type Output = Tensor;
            fn $method(self, rhs: Tensor) -> Tensor {
                $trait::$method(self, &rhs)
            }
        }
    };
}

binary_operator!(Add, add, add);
binary_operator!(Sub, sub, sub);
binary_operator!(Mul, mul, mul);
binary_operator!(Div, div, div);

impl Neg for &Tensor {
    type Output = Tensor;
    fn neg(self) -> Tensor {
        unwrap_op(Tensor::neg(self))
    }
}

impl Neg for Tensor {
    type Output = Tensor;
    fn neg(self) -> Tensor {
        unwrap_op(Tensor::neg(&self))
    }
}
