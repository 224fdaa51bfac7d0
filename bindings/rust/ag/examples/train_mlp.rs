//! Trains a two-layer MLP classifier with ag and prints the loss falling.
//!
//! Data: Fashion-MNIST IDX files (Debian's `dataset-fashion-mnist`, gzip or
//! not) from the directory given by `--data DIR` or `AG_FASHION_MNIST`, by
//! default /usr/share/datasets/fashion-mnist; without them, a three-arm
//! spiral made here. `--quick` trains briefly (for test runs).
//!
//!     cargo run --release --example train_mlp -- [--quick] [--data DIR]
//!
//! Exits non-zero when the loss did not fall.

use ag::{Context, DType, Result, Tensor};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

struct Dataset {
    name: String,
    features: usize,
    classes: usize,
    train_x: Vec<f32>,
    train_y: Vec<i64>,
    test_x: Vec<f32>,
    test_y: Vec<i64>,
}

/// The bytes of `base` or `base.gz` (gunzipped by the system's gzip).
fn read_maybe_gz(dir: &Path, base: &str) -> Option<Vec<u8>> {
    let plain = dir.join(base);
    if plain.exists() {
        return std::fs::read(plain).ok();
    }
    let gz = dir.join(format!("{base}.gz"));
    if !gz.exists() {
        return None;
    }
    let out = Command::new("gzip").arg("-dc").arg(&gz).output().ok()?;
    out.status.success().then_some(out.stdout)
}

fn be_u32(b: &[u8], at: usize) -> usize {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as usize
}

/// (pixels scaled to [0, 1], labels) of an IDX image/label file pair.
fn idx_pair(dir: &Path, images: &str, labels: &str, limit: usize) -> Option<(Vec<f32>, Vec<i64>)> {
    let img = read_maybe_gz(dir, images)?;
    let lab = read_maybe_gz(dir, labels)?;
    if be_u32(&img, 0) != 0x803 || be_u32(&lab, 0) != 0x801 {
        return None;
    }
    let n = be_u32(&img, 4).min(be_u32(&lab, 4)).min(limit);
    let pixels = be_u32(&img, 8) * be_u32(&img, 12);
    let x = img[16..16 + n * pixels].iter().map(|&p| f32::from(p) / 255.0).collect();
    let y = lab[8..8 + n].iter().map(|&l| i64::from(l)).collect();
    Some((x, y))
}

fn fashion_mnist(dir: &Path, quick: bool) -> Option<Dataset> {
    let (train_x, train_y) = idx_pair(dir, "train-images-idx3-ubyte", "train-labels-idx1-ubyte", if quick { 6000 } else { usize::MAX })?;
    let (test_x, test_y) = idx_pair(dir, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", if quick { 1000 } else { usize::MAX })?;
    Some(Dataset { name: format!("Fashion-MNIST from {}", dir.display()), features: 784, classes: 10, train_x, train_y, test_x, test_y })
}

/// Three interleaved spiral arms in 2-D, with a little noise.
fn spiral(points_per_class: usize) -> Dataset {
    let mut seed = 12345u64;
    let mut noise = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.2
    };
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for class in 0..3 {
        for i in 0..points_per_class {
            let r = i as f32 / points_per_class as f32;
            let angle = class as f32 * 4.0 + r * 4.0 + noise();
            x.extend([r * angle.sin(), r * angle.cos()]);
            y.push(class as i64);
        }
    }
    // A fixed permutation mixes the classes; 80 % of the points train.
    let split = x.len() / 2 * 4 / 5 * 2;
    let order: Vec<usize> = (0..y.len()).map(|i| (i * 7919) % y.len()).collect();
    let xs: Vec<f32> = order.iter().flat_map(|&i| [x[2 * i], x[2 * i + 1]]).collect();
    let ys: Vec<i64> = order.iter().map(|&i| y[i]).collect();
    Dataset {
        name: "three-arm spiral".into(),
        features: 2,
        classes: 3,
        train_x: xs[..split].to_vec(),
        train_y: ys[..split / 2].to_vec(),
        test_x: xs[split..].to_vec(),
        test_y: ys[split / 2..].to_vec(),
    }
}

struct Mlp {
    params: Vec<Tensor>,
}

impl Mlp {
    fn new(ctx: &Context, inputs: usize, hidden: usize, classes: usize) -> Result<Mlp> {
        ctx.manual_seed(0)?;
        let layer = |fan_in: usize, fan_out: usize| -> Result<(Tensor, Tensor)> {
            let w = ctx.randn(DType::F32, &[fan_out as i64, fan_in as i64])?;
            let w = ag::no_grad(|| &w * (2.0 / fan_in as f64).sqrt());
            Ok((w, ctx.zeros(DType::F32, &[fan_out as i64])?))
        };
        let (w1, b1) = layer(inputs, hidden)?;
        let (w2, b2) = layer(hidden, classes)?;
        let params = vec![w1, b1, w2, b2];
        for p in &params {
            p.set_requires_grad(true)?;
        }
        Ok(Mlp { params })
    }

    fn logits(&self, x: &Tensor) -> Result<Tensor> {
        let p = &self.params;
        x.linear(&p[0], Some(&p[1]))?.relu()?.linear(&p[2], Some(&p[3]))
    }

    /// SGD with momentum; velocities live beside the parameters.
    fn step(&self, velocity: &[Tensor], lr: f64) -> Result<()> {
        ag::no_grad(|| {
            for (p, v) in self.params.iter().zip(velocity) {
                let g = p.grad()?.expect("every parameter gets a gradient");
                v.mul_(&v.scalar_like(0.9)?)?;
                v.add_(&g)?;
                p.sub_(&(v * lr))?;
                p.set_grad(None)?;
            }
            Ok(())
        })
    }
}

fn accuracy(ctx: &Context, model: &Mlp, data: &Dataset) -> Result<f64> {
    let n = data.test_y.len();
    let x = ctx.from_slice(&data.test_x, &[n as i64, data.features as i64])?;
    let predicted = ag::no_grad(|| model.logits(&x)?.argmax(1, 0))?.to_vec::<i64>()?;
    Ok(predicted.iter().zip(&data.test_y).filter(|(p, y)| p == y).count() as f64 / n as f64)
}

fn run(quick: bool, dir: &Path) -> Result<bool> {
    let data = fashion_mnist(dir, quick).unwrap_or_else(|| spiral(if quick { 300 } else { 1000 }));
    let ctx = Context::new().unwrap();
    let (steps, batch, hidden, lr) = if data.features == 2 { (if quick { 300 } else { 3000 }, 64, 64, 0.05) } else { (if quick { 150 } else { 2000 }, 64, 128, 0.01) };
    println!("training an MLP ({} -> {hidden} -> {}) on {}: {} train, {} test examples", data.features, data.classes, data.name, data.train_y.len(), data.test_y.len());
    let model = Mlp::new(&ctx, data.features, hidden, data.classes)?;
    let velocity: Vec<Tensor> = model.params.iter().map(|p| ctx.zeros(DType::F32, &p.shape())).collect::<Result<_>>()?;
    let n = data.train_y.len();
    let (mut first, mut window, mut last) = (None, 0.0, 0.0);
    let report_every = steps / 6;
    for step in 0..steps {
        let start = (step * batch) % (n - batch);
        let x = ctx.from_slice(&data.train_x[start * data.features..(start + batch) * data.features], &[batch as i64, data.features as i64])?;
        let y = ctx.from_slice_i64(&data.train_y[start..start + batch], &[batch as i64])?;
        let loss = model.logits(&x)?.cross_entropy(&y, ag::reduction::MEAN, ag::sys::AG_IGNORE_INDEX_DEFAULT.into(), 0.0)?;
        loss.backward()?;
        model.step(&velocity, lr)?;
        window += loss.item()?;
        if (step + 1) % report_every == 0 {
            let mean = window / report_every as f64;
            println!("step {:5}  loss {mean:.4}", step + 1);
            first.get_or_insert(mean);
            last = mean;
            window = 0.0;
        }
    }
    println!("test accuracy {:.1} %", 100.0 * accuracy(&ctx, &model, &data)?);
    let first = first.unwrap_or(f64::INFINITY);
    Ok(last < first)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let dir = args
        .iter()
        .position(|a| a == "--data")
        .and_then(|i| args.get(i + 1).map(PathBuf::from))
        .or_else(|| std::env::var_os("AG_FASHION_MNIST").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("/usr/share/datasets/fashion-mnist"));
    match run(quick, &dir) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("the loss did not fall");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
