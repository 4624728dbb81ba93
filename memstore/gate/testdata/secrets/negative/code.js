const apiKey = process.env.API_KEY;
if (token == null) { throw new Error('no token'); }
const password = os.Getenv("DB_PASSWORD");
const token = localStorage.getItem('token');
let apiKey = config.apiKey;
const secret = this.props.secret;
var password = getPassword();
