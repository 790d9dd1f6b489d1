//! A minimal linker for test images: it lays out a handful of methods the
//! way a JOP tree's linker lays out an application (length, special
//! pointers, statics, code, method structures, a constant pool, the
//! runtime's jump table and exception helper), so that the image machine
//! and everything that downloads images can be tested without a JOP tree.
//! It is not a JOP linker: there is no runtime, no class library, and the
//! code is written byte by byte.

/// A method of the test image: its code, argument and extra local words.
pub struct Method {
    pub code: Vec<u8>,
    pub args: u32,
    pub locals: u32,
}

impl Method {
    pub fn new(code: &[u8], args: u32, locals: u32) -> Method {
        Method {
            code: code.to_vec(),
            args,
            locals,
        }
    }
}

/// What a constant-pool entry holds.
pub enum Cp {
    /// The address of method `k`'s structure (invokestatic).
    Method(usize),
    /// `(vtindex * 2) << 8 | (args - 1)` (invokevirtual).
    Virtual {
        index: u32,
        args: u32,
    },
    Int(i32),
}

/// The methods of the test class are also its method table (vtindex =
/// position); the constant pool is the class's. `boot` and `main` name
/// methods; the jump table (256 entries) and the exception helper's four
/// entries all point at `stub` and `helper`.
pub struct TestImage {
    pub methods: Vec<Method>,
    pub cp: Vec<Cp>,
    pub boot: usize,
    /// Every bytecode JOP implements in Java runs this.
    pub stub: Method,
    /// The exception helper (`jjhp + 6`).
    pub helper: Method,
    pub statics: Vec<i32>,
    /// An object: its handle's address is static 0, its fields follow.
    pub object_fields: Vec<i32>,
}

/// Where things landed.
pub struct Layout {
    pub words: Vec<u32>,
    /// The address of each method's structure.
    pub struct_of: Vec<u32>,
}

impl TestImage {
    pub fn build(&self) -> Layout {
        let mut w: Vec<u32> = vec![0, 0];
        let statics_at = w.len() as u32;
        w.extend(self.statics.iter().map(|v| *v as u32));
        // Code, each method's packed big-endian, with JOP's flags word after it.
        let mut code_at = Vec::new();
        let all: Vec<&Method> = self.methods.iter().chain([&self.stub, &self.helper]).collect();
        for m in &all {
            code_at.push((w.len() as u32, m.code.len().div_ceil(4) as u32));
            for chunk in m.code.chunks(4) {
                let mut b = [0u8; 4];
                b[..chunk.len()].copy_from_slice(chunk);
                w.push(u32::from_be_bytes(b));
            }
            w.push(0);
        }
        // The object: a handle (data pointer, method table) and its fields.
        let handle = w.len() as u32;
        w.extend([0, 0]);
        let fields = w.len() as u32;
        w.extend(self.object_fields.iter().map(|v| *v as u32));
        w[handle as usize] = fields;
        w[statics_at as usize] = handle;
        // Special pointers and an empty class-initialiser table.
        let special = w.len() as u32;
        w[1] = special;
        w.extend([0; 6]);
        w.push(0);
        // The test class: header, method table, back pointer, constant pool.
        let class = w.len() as u32;
        w.extend([self.object_fields.len() as u32, statics_at, 0, 0, 0]);
        let mtab = w.len() as u32;
        w.extend(std::iter::repeat_n(0, 2 * self.methods.len()));
        w.push(class);
        let cp = w.len() as u32;
        w.push(self.cp.len() as u32 + 1);
        w.extend(std::iter::repeat_n(0, self.cp.len()));
        let structure = |(start, len): (u32, u32), m: &Method| [start << 10 | len, cp << 10 | m.locals << 5 | m.args];
        let struct_of: Vec<u32> = (0..self.methods.len()).map(|k| mtab + 2 * k as u32).collect();
        for (k, m) in self.methods.iter().enumerate() {
            let s = structure(code_at[k], m);
            w[struct_of[k] as usize] = s[0];
            w[struct_of[k] as usize + 1] = s[1];
        }
        for (k, e) in self.cp.iter().enumerate() {
            w[(cp + 1) as usize + k] = match e {
                Cp::Method(m) => struct_of[*m],
                Cp::Virtual { index, args } => (index * 2) << 8 | (args - 1),
                Cp::Int(v) => *v as u32,
            };
        }
        w[handle as usize + 1] = mtab;
        // The runtime's jump table and helper: every entry the same method.
        let n = self.methods.len();
        let jjp = w.len() as u32;
        for _ in 0..256 {
            w.extend(structure(code_at[n], &self.stub));
        }
        let jjhp = w.len() as u32;
        for _ in 0..4 {
            w.extend(structure(code_at[n + 1], &self.helper));
        }
        let sp = special as usize;
        w[sp] = struct_of[self.boot];
        w[sp + 1] = jjp;
        w[sp + 2] = jjhp;
        w[sp + 3] = struct_of[self.boot];
        w[sp + 4] = statics_at;
        w[sp + 5] = 1;
        w[0] = w.len() as u32;
        Layout { words: w, struct_of }
    }
}

/// Code that prints `text` on the UART: `bipush c; sipush -111; jopsys_wr` per byte.
pub fn print(text: &str) -> Vec<u8> {
    text.bytes().flat_map(|c| [16, c, 17, 0xff, 0x91, 210]).collect()
}

/// Code that ends the run (prints `JVM exit!`) and spins, as JOP's runtime does.
pub fn exit_code() -> Vec<u8> {
    let mut c = print("JVM exit!");
    c.extend([167, 0, 0]); // goto itself
    c
}

/// An image whose boot method prints `text` and ends the run.
pub fn printing(text: &str) -> Vec<u32> {
    let mut code = print(text);
    code.extend(exit_code());
    TestImage {
        methods: vec![Method::new(&code, 0, 0)],
        cp: Vec::new(),
        boot: 0,
        stub: Method::new(&[177], 0, 0),
        helper: Method::new(&exit_code(), 0, 0),
        statics: vec![0],
        object_fields: Vec::new(),
    }
    .build()
    .words
}
